// bench/hprof's JVM: a heap of about 10 million live objects in about 1 GiB, shaped like a service's cache: a map
// of N entries (the first argument, default 2,500,000), each a Long key, an Item and the Item's 200-byte payload,
// the Items also chained one to the next (a list N long: what recursion would not survive). Prints "ready".
import java.util.HashMap;
import java.util.Map;

final class Item {
    final long id;
    final byte[] payload = new byte[200];
    Item prev;
    Item(long id, Item prev) { this.id = id; this.prev = prev; }
}

public class HeapFill {
    static final Map<Long, Item> CACHE = new HashMap<>();

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2500000;
        Item prev = null;
        for (int i = 0; i < n; i++) {
            prev = new Item(1000L + i, prev);
            CACHE.put(1000L + i, prev);
        }
        System.out.println("ready " + CACHE.size());
        while (true) Thread.sleep(1000);
    }
}

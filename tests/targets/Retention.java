// A JVM test target for `diagtop analyze FILE.hprof`: retention known by construction.
//   Retention.KEEP        a static HashMap<Integer, BarLeakedThing> of N entries (first argument, default 20000)
//   Retention.LISTENERS   a static list of closures, each capturing a ListenerPayload
//   a pooled thread       holding a LocalThing in a ThreadLocal
//   Retention.SOFT        a chain of SoftThing held only through a SoftReference: excluded, never blamed
//   a CycleThing pair     referring to each other and to nothing else: garbage, so absent from a dump
//   Retention.GROWING     a list gaining 1000 GrowThing every 100 ms (up to 300000): the leak two dumps show
// Started with -javaagent on its own jar, it weighs what each holds with Instrumentation.getObjectSize (the JVM's
// own object sizes) and prints one line of JSON with those truths, then "ready".
import java.lang.instrument.Instrumentation;
import java.lang.ref.Reference;
import java.lang.ref.SoftReference;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

final class BarLeakedThing {
    final int id;
    final long[] payload = new long[6];
    BarLeakedThing(int id) { this.id = id; }
}

final class ListenerPayload {
    final byte[] bytes = new byte[200];
}

final class LocalThing {
    final long[] big = new long[5000];
}

final class SoftThing {
    SoftThing next;
    final int[] data = new int[50];
}

final class GrowThing {
    int a, b, c;
}

final class CycleThing {
    CycleThing other;
}

public class Retention {
    static final Map<Integer, BarLeakedThing> KEEP = new HashMap<>();
    static final List<Runnable> LISTENERS = new ArrayList<>();
    static final ThreadLocal<LocalThing> LOCAL = new ThreadLocal<>();
    static final List<GrowThing> GROWING = new ArrayList<>();
    static SoftReference<SoftThing> SOFT;
    static Instrumentation inst;

    public static void premain(String args, Instrumentation i) { inst = i; }

    // The bytes an object graph holds: every object reachable from root, each once, never through a Class or a
    // Reference's referent. By construction nothing else refers to these objects, so this is their retained size.
    static long weigh(Object root) throws IllegalAccessException {
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        ArrayDeque<Object> todo = new ArrayDeque<>();
        todo.push(root);
        seen.put(root, true);
        long total = 0;
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            total += inst.getObjectSize(o);
            Class<?> c = o.getClass();
            if (c.isArray()) {
                if (!c.getComponentType().isPrimitive())
                    for (int k = 0; k < Array.getLength(o); k++) visit(Array.get(o, k), seen, todo);
                continue;
            }
            for (; c != null; c = c.getSuperclass())
                for (Field f : c.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) continue;
                    if (c == Reference.class && f.getName().equals("referent")) continue;
                    f.setAccessible(true);
                    visit(f.get(o), seen, todo);
                }
        }
        return total;
    }

    static void visit(Object o, IdentityHashMap<Object, Boolean> seen, ArrayDeque<Object> todo) {
        if (o == null || o instanceof Class || seen.containsKey(o)) return;
        seen.put(o, true);
        todo.push(o);
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        for (int k = 0; k < n; k++) KEEP.put(1000 + k, new BarLeakedThing(k));
        for (int k = 0; k < 100; k++) {
            ListenerPayload p = new ListenerPayload();
            LISTENERS.add(() -> p.bytes[0]++);
        }
        SoftThing head = null;
        for (int k = 0; k < 300; k++) { SoftThing s = new SoftThing(); s.next = head; head = s; }
        SOFT = new SoftReference<>(head);
        head = null;
        { CycleThing a = new CycleThing(), b = new CycleThing(); a.other = b; b.other = a; }

        ExecutorService pool = Executors.newFixedThreadPool(1, r -> { Thread t = new Thread(r, "pooled"); t.setDaemon(true); return t; });
        LocalThing[] local = new LocalThing[1];
        pool.submit(() -> { local[0] = new LocalThing(); LOCAL.set(local[0]); }).get();
        long localRetained = weigh(local[0]);
        local[0] = null;

        System.out.println("{\"keep_entries\": " + n + ", \"keep_retained\": " + weigh(KEEP) +
                           ", \"listeners_retained\": " + weigh(LISTENERS) +
                           ", \"local_retained\": " + localRetained +
                           ", \"bar_shallow\": " + inst.getObjectSize(KEEP.get(1000)) + "}");
        System.out.println("ready");
        while (true) {
            synchronized (GROWING) {
                for (int k = 0; k < 1000 && GROWING.size() < 300000; k++) GROWING.add(new GrowThing());
            }
            Thread.sleep(100);
        }
    }
}

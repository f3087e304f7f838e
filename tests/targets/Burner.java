// A JVM test target that burns CPU in named methods: the thread "burner" spends its time in Burner.spin (called
// from Burner.burnLoop), so a CPU profile's top row names it. Prints "ready" once the thread runs.
public class Burner {
    static volatile long sink;

    static long spin(long seed) {
        long x = seed;
        for (int i = 0; i < 1000000; i++) x = x * 6364136223846793005L + 1442695040888963407L ^ (x >>> 17);
        return x;
    }

    static void burnLoop() {
        long x = 1;
        while (true) sink = x = spin(x);
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(Burner::burnLoop, "burner");
        t.setDaemon(true);
        t.start();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

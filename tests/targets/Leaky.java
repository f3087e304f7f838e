// A JVM test target for the HotSpot provider: threads parked in named methods (a sleeper, a waiter on a monitor,
// a thread blocked behind a holder), a map of LeakedThing growing by 1000 entries every 100 ms up to a cap
// (the first argument, default 300000), and a thread whose name needs care ("odd \"name\" ...").
// Prints "ready" once every thread runs.
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

// What leaks: a top-level class, so the histogram names it plainly.
final class LeakedThing {
    final int id;
    final long[] payload = new long[4];
    LeakedThing(int id) { this.id = id; }
}

public class Leaky {
    static final Object waitLock = new Object();
    static final Object heldLock = new Object();
    static final Map<Integer, LeakedThing> leaked = new HashMap<>();
    static final CountDownLatch started = new CountDownLatch(3);

    static void sleeperLoop() throws InterruptedException {
        started.countDown();
        while (true) Thread.sleep(1000);
    }

    static void waiterLoop() throws InterruptedException {
        synchronized (waitLock) {
            started.countDown();
            while (true) waitLock.wait();
        }
    }

    static void holderLoop() throws InterruptedException {
        synchronized (heldLock) {
            started.countDown();
            while (true) Thread.sleep(1000);
        }
    }

    static void blockedLoop() {
        synchronized (heldLock) {
            System.out.println("never: the holder never lets go");
        }
    }

    static void growLoop(int cap) throws InterruptedException {
        int next = 0;
        while (true) {
            synchronized (leaked) {
                for (int i = 0; i < 1000 && next < cap; i++, next++) leaked.put(next, new LeakedThing(next));
            }
            Thread.sleep(100);
        }
    }

    interface Body { void run() throws Exception; }

    static Thread start(String name, boolean daemon, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, name);
        t.setDaemon(daemon);
        t.start();
        return t;
    }

    public static void main(String[] args) throws Exception {
        int cap = args.length > 0 ? Integer.parseInt(args[0]) : 300000;
        Thread sleeper = start("leaky-sleeper", false, Leaky::sleeperLoop);
        start("leaky-waiter", true, Leaky::waiterLoop);
        start("leaky-holder", true, Leaky::holderLoop);
        started.await(); // the holder has the lock before the blocked thread asks for it
        start("leaky-blocked", true, Leaky::blockedLoop);
        start("odd \"name\" #7 ünï", true, () -> growLoop(cap));
        while (true) {
            Thread.State s = null;
            for (Thread t : Thread.getAllStackTraces().keySet())
                if (t.getName().equals("leaky-blocked")) s = t.getState();
            if (s == Thread.State.BLOCKED) break;
            Thread.sleep(5);
        }
        System.out.println("ready");
        System.out.flush();
        sleeper.join();
    }
}

// A JVM test target for "who holds the lock": two threads deadlocked on two monitors (dl-a, dl-b), two on two
// ReentrantLocks (jdl-a, jdl-b), ten threads (pool-0..9) blocked on a monitor that "holder" keeps while it
// sleeps, and three (juc-0..2) parked on a ReentrantLock that "juc-holder" keeps. Prints "ready" once every one
// of them is blocked.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

public class Locks {
    static final Object A = new Object(), B = new Object(), M = new Object();
    static final ReentrantLock L = new ReentrantLock(), P = new ReentrantLock(), Q = new ReentrantLock();
    static final CountDownLatch bothIn = new CountDownLatch(2), held = new CountDownLatch(2),
        bothLocked = new CountDownLatch(2);

    static void sleepForever() {
        for (;;) {
            try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException e) { }
        }
    }

    static void await(CountDownLatch l) {
        try { l.await(); } catch (InterruptedException e) { }
    }

    static void crossLock(Object first, Object second) {
        synchronized (first) {
            bothIn.countDown();
            await(bothIn);
            synchronized (second) { sleepForever(); }
        }
    }

    static void crossLocks(ReentrantLock first, ReentrantLock second) {
        first.lock();
        bothLocked.countDown();
        await(bothLocked);
        second.lock();
    }

    static void holdMonitor() {
        synchronized (M) {
            held.countDown();
            sleepForever();
        }
    }

    static void holdLock() {
        L.lock();
        held.countDown();
        sleepForever();
    }

    static void enterMonitor() {
        synchronized (M) { }
    }

    static void takeLock() {
        L.lock();
    }

    public static void main(String[] args) throws Exception {
        List<Thread> blocked = new ArrayList<>();
        Thread a = new Thread(() -> crossLock(A, B), "dl-a"), b = new Thread(() -> crossLock(B, A), "dl-b");
        new Thread(Locks::holdMonitor, "holder").start();
        new Thread(Locks::holdLock, "juc-holder").start();
        held.await();
        a.start();
        b.start();
        blocked.add(a);
        blocked.add(b);
        blocked.add(new Thread(() -> crossLocks(P, Q), "jdl-a"));
        blocked.add(new Thread(() -> crossLocks(Q, P), "jdl-b"));
        for (int i = 0; i < 10; i++) blocked.add(new Thread(Locks::enterMonitor, "pool-" + i));
        for (int i = 0; i < 3; i++) blocked.add(new Thread(Locks::takeLock, "juc-" + i));
        for (Thread t : blocked) if (t.getState() == Thread.State.NEW) t.start();
        for (Thread t : blocked)
            while (t.getState() != Thread.State.BLOCKED && t.getState() != Thread.State.WAITING) Thread.sleep(10);
        System.out.println("ready");
        System.out.flush();
        sleepForever();
    }
}

// A JVM test target: sleeps until killed, printing "ready" once its main thread runs.
public class Sleeper {
    public static void main(String[] args) throws Exception {
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

/* Short process names for titles: an interpreter is named by what it runs. */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "collect/procname.h"

/* The short name of a command line written with spaces between its arguments (none of them has a space). */
static const char *name_of(const char *spaced, const char *comm)
{
    static char out[128];
    char cmd[512];
    size_t n = strlen(spaced);
    memcpy(cmd, spaced, n + 1);
    for (size_t i = 0; i < n; i++)
        if (cmd[i] == ' ') cmd[i] = '\0';
    procname_short(cmd, n + 1, comm, out, sizeof out);
    return out;
}

static void python_is_named_by_its_script_or_module(void)
{
    CHECK_STR(name_of("python3 leak.py", "python3"), "python3 leak.py");
    CHECK_STR(name_of("/usr/bin/python3.11 -u -X dev /srv/app/leak.py --port 8", "python3.11"), "python3.11 leak.py");
    CHECK_STR(name_of("python3 -m http.server 8000", "python3"), "python3 -m http.server");
    CHECK_STR(name_of("python3 -uBmhttp.server", "python3"), "python3 -m http.server");
    CHECK_STR(name_of("python3 -W ignore -c print(1)", "python3"), "python3 -c");
    CHECK_STR(name_of("python3", "python3"), "python3");
    CHECK_STR(name_of("pypy3 bench.py", "pypy3"), "pypy3 bench.py");
}

static void java_is_named_by_its_jar_or_main_class(void)
{
    CHECK_STR(name_of("/usr/lib/jvm/bin/java -Xmx1g -jar /opt/app/app.jar --x", "java"), "java -jar app.jar");
    CHECK_STR(name_of("java -cp build/targets/java -Dx=1 Main arg", "java"), "java Main");
    CHECK_STR(name_of("java -classpath a:b org.apache.catalina.startup.Bootstrap start", "java"), "java Bootstrap");
    CHECK_STR(name_of("java --module-path mods -m com.foo/com.foo.Main", "java"), "java -m com.foo");
    CHECK_STR(name_of("java Hello.java", "java"), "java Hello.java");
}

static void other_interpreters_and_shells(void)
{
    CHECK_STR(name_of("node --inspect=9229 -r ts-node/register /srv/server.js", "node"), "node server.js");
    CHECK_STR(name_of("node -e 1", "node"), "node -e");
    CHECK_STR(name_of("node --print 1", "node"), "node --print");
    CHECK_STR(name_of("ruby -I lib -rjson bin/rails server", "ruby"), "ruby rails");
    CHECK_STR(name_of("ruby -rtime x.rb", "ruby"), "ruby x.rb");
    CHECK_STR(name_of("perl -ne print", "perl"), "perl -e");
    CHECK_STR(name_of("perl5.36 -w /usr/bin/tool.pl", "perl5.36"), "perl5.36 tool.pl");
    CHECK_STR(name_of("/bin/bash -x ./run.sh a b", "bash"), "bash run.sh");
    CHECK_STR(name_of("sh -c sleep", "sh"), "sh -c");
    CHECK_STR(name_of("bash -o pipefail deploy.sh", "bash"), "bash deploy.sh");
    CHECK_STR(name_of("-bash", "bash"), "bash"); /* a login shell runs no script */
    CHECK_STR(name_of("bash -s", "bash"), "bash");
}

static void other_programs_keep_their_comm(void)
{
    CHECK_STR(name_of("/usr/sbin/nginx -g daemon", "nginx"), "nginx");
    CHECK_STR(name_of("/usr/bin/pythonista x.py", "pythonista"), "pythonista"); /* not python followed by a version */
    CHECK_STR(name_of("./javac X.java", "javac"), "javac");
    char out[64];
    procname_short(NULL, 0, "sleeper", out, sizeof out);
    CHECK_STR(out, "sleeper");
    procname_short(NULL, 0, "", out, sizeof out);
    CHECK_STR(out, "");
}

static void names_are_sanitized_and_bounded(void)
{
    CHECK_STR(name_of("python3 evil\033[2J.py", "python3"), "python3 evil?[2J.py");
    char out[12];
    const char cmd[] = "python3\0a_very_long_script_name.py";
    procname_short(cmd, sizeof cmd, "python3", out, sizeof out);
    CHECK(strlen(out) < sizeof out);
    CHECK(strncmp(out, "python3 a_v", 11) == 0);
}

static void a_running_process_is_named(void)
{
    char out[64];
    procname_of_pid(getpid(), out, sizeof out);
    CHECK_STR(out, "test_procname");
    procname_of_pid(0, out, sizeof out); /* no such process */
    CHECK_STR(out, "");
}

int main(void)
{
    check_suite = "procname";
    RUN(python_is_named_by_its_script_or_module);
    RUN(java_is_named_by_its_jar_or_main_class);
    RUN(other_interpreters_and_shells);
    RUN(other_programs_keep_their_comm);
    RUN(names_are_sanitized_and_bounded);
    RUN(a_running_process_is_named);
    CHECK_EXIT();
}

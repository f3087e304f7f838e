# diagtop build. `make` builds the optimized build/diagtop; `make test` also builds an ASan+UBSan copy in
# build/asan/ and runs every test against it; `make run` starts the monitor; `make bench` compares with top.
PREFIX ?= /usr/local
CC ?= cc
PKGS := ncursesw libcjson libdw zlib
# libmicrohttpd and GnuTLS: headers only; diagtop serve opens them when it starts (src/api/api_libs.c), so that
# the other commands do not map and relocate a third more shared libraries at every start.
DLOPEN_PKGS := libmicrohttpd gnutls
PKG_CFLAGS = $(shell pkg-config --cflags libproc2 $(PKGS) $(DLOPEN_PKGS) 2>/dev/null)
# Linked in rather than shared, so that a one-shot command starts in a few milliseconds (every shared library is
# one more to map and relocate at each start): libproc2 (its libsystemd is opened only if used:
# src/collect/libproc2_sd.c), libdw and libelf with their decompressors, and libdeflate (inflates debug sections:
# src/actions/stack/elf_inflate.c). libstdc++ is opened on the first C++ name (src/actions/stack/demangle.c).
STATIC_LIBS := -l:libproc2.a -l:libdw.a -l:libelf.a -l:libdeflate.a -l:liblzma.a -l:libbz2.a -l:libz.a
PKG_LIBS = $(STATIC_LIBS) $(shell pkg-config --libs ncursesw libcjson 2>/dev/null) -lcrypt -lm -ldl

WARN := -Werror=implicit-function-declaration -Wall -Wextra -Wshadow -Wformat=2 -Wno-format-nonliteral -Wstrict-prototypes -Wmissing-prototypes -pthread
CFLAGS ?= -O2 -g
# Includes name their folder from src/ ("actions/stack/stack.h"), never ../
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -Isrc $(WARN) $(PKG_CFLAGS) $(CFLAGS)
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# Quiet by default ("CC src/..."); `make V=1` prints every command in full.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' '$(1)' '$(2)'
endif

# Every .c below src/ except the agent's (a library of its own), at any depth, plus the explorer page's assets,
# generated into build/ from src/api/assets at build time.
PAGE_DATA := build/gen/api_page_data.c
SRC := $(sort $(shell find src -name '*.c' -not -path 'src/agent/*')) $(PAGE_DATA)
LIB_SRC := $(filter-out src/app/main.c,$(SRC))
AGENT_SRC := $(sort $(wildcard src/agent/*.c))
AGENT_LIB := $(if $(AGENT_SRC),build/libdiagtop-agent.so)
AGENT_LIBS :=
OBJ := $(SRC:%.c=build/obj/%.o)
ASAN_OBJ := $(SRC:%.c=build/asan/obj/%.o)
ASAN_LIB_OBJ := $(LIB_SRC:%.c=build/asan/obj/%.o)
# Unit tests link the library, not a list of objects: each pulls in only what it uses.
ASAN_LIB := build/asan/libdiagtop.a

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/asan/unit/%)
TARGET_SRC := $(wildcard tests/targets/*.c)
TARGET_BIN := $(TARGET_SRC:tests/targets/%.c=build/targets/%)

# `make test T="stack_cli tui/"` runs only the tests whose path contains one of the words.
.PHONY: all deps test-deps run test bench install clean asan unit targets

all: build/diagtop $(AGENT_LIB)

# Packages come first, under any -j: every compile waits (order-only) for a stamp that scripts/deps.sh leaves
# once what is needed is installed. `make deps` / `make test-deps` check again.
DEPS_STAMP := build/.deps-build
TEST_DEPS_STAMP := build/.deps-test
deps:
	@rm -f $(DEPS_STAMP) && $(MAKE) --no-print-directory $(DEPS_STAMP)

test-deps:
	@rm -f $(TEST_DEPS_STAMP) && $(MAKE) --no-print-directory $(TEST_DEPS_STAMP)

$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(dir $@) && touch $@

$(TEST_DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh --test
	@mkdir -p $(dir $@) && touch $@ $(DEPS_STAMP)

build/diagtop: $(OBJ)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(OBJ) $(PKG_LIBS)

build/obj/%.o: %.c | $(DEPS_STAMP)
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

build/asan/diagtop: $(ASAN_OBJ)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o $@ $(ASAN_OBJ) $(PKG_LIBS)

build/asan/obj/%.o: %.c | $(DEPS_STAMP)
	$(call say,CC,$< [asan])
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -MMD -MP -c -o $@ $<

$(ASAN_LIB): $(ASAN_LIB_OBJ)
	$(call say,AR,$@)
	@rm -f $@
	$(Q)ar rcs $@ $(ASAN_LIB_OBJ)

build/asan/unit/%: tests/unit/%.c tests/unit/check.h $(ASAN_LIB)
	$(call say,CC,$< [unit])
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -DFIXTURES_DIR=\"$(CURDIR)/tests/fixtures\" -o $@ $< $(ASAN_LIB) $(PKG_LIBS)

# The explorer page (src/api/assets) as C arrays, made at build time; the generated file is never committed.
$(PAGE_DATA): src/api/assets/embed.sh src/api/assets/explorer.html src/api/assets/explorer.js src/api/assets/explorer.css
	$(call say,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)src/api/assets/embed.sh >$@.tmp && mv $@.tmp $@

# Test targets: -g -O2 so that later stack tests find names and lines.
build/targets/%: tests/targets/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -g -O2 -pthread -Wall -o $@ $<
build/targets/hotspots build/targets/stripme: tests/targets/spin.h

# A stripped copy: frames must still unwind (.eh_frame) and show module+offset.
build/targets/threads-stripped: build/targets/threads
	$(call say,STRIP,$@)
	$(Q)strip -o $@ $<
# Without any symbol or debug info at all (no .symtab, no .debug_*): the profiler names its frames module+offset.
build/targets/stripme-stripped: build/targets/stripme
	$(call say,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# One unwinding target built the ways binaries come: without frame pointers; with only .debug_frame (no unwind
# tables in .eh_frame); a stripped PIE whose debug info is in a separate file found by its debuglink. And C++.
UNWIND_SRC := tests/targets/unwind/unwindme.c
UNWIND_BIN := build/targets/unwind-nofp build/targets/unwind-debugframe build/targets/unwind-stripped build/targets/throwing
TARGET_CC = $(CC) -std=gnu11 -D_GNU_SOURCE -g -O2 -pthread -Wall
build/targets/unwind-nofp: $(UNWIND_SRC)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(TARGET_CC) -fomit-frame-pointer -o $@ $<
build/targets/unwind-debugframe: $(UNWIND_SRC)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(TARGET_CC) -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-exceptions -o $@ $<
build/targets/unwind-stripped: $(UNWIND_SRC)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(TARGET_CC) -fPIE -pie -o $@.full $<
	$(Q)objcopy --only-keep-debug $@.full $@.debug
	$(Q)strip --strip-all -o $@ $@.full
	$(Q)objcopy --add-gnu-debuglink=$@.debug $@
	$(Q)rm -f $@.full
build/targets/throwing: tests/targets/unwind/throwing.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)
	$(Q)$(CXX) -g -O2 -pthread -Wall -o $@ $<

# Go programs (standard library only) and a JVM class, for runtime detection, the agents and Go stacks.
build/targets/gopsy: tests/targets/gopsy/main.go
	@mkdir -p $(dir $@) build/gocache
	$(call say,GO,$@)
	$(Q)GOCACHE=$(CURDIR)/build/gocache GO111MODULE=off go build -o $@ $<
build/targets/gostacks: tests/targets/gostacks/main.go
	@mkdir -p $(dir $@) build/gocache
	$(call say,GO,$@)
	$(Q)GOCACHE=$(CURDIR)/build/gocache GO111MODULE=off go build -o $@ $<
build/targets/goparked: tests/targets/goparked/main.go
	@mkdir -p $(dir $@) build/gocache
	$(call say,GO,$@)
	$(Q)GOCACHE=$(CURDIR)/build/gocache GO111MODULE=off go build -o $@ $<

build/targets/java/%.class: tests/targets/%.java
	@mkdir -p $(dir $@)
	$(call say,JAVAC,$@)
	$(Q)javac -d $(dir $@) $<
# Retention weighs its own objects with Instrumentation (-javaagent on its own jar): a jar with Premain-Class.
build/targets/java/retention.jar: tests/targets/Retention.java
	@mkdir -p build/targets/java/retention
	$(call say,JAR,$@)
	$(Q)javac -d build/targets/java/retention $< && printf 'Premain-Class: Retention\n' >build/targets/java/retention.mf && \
	    jar cfm $@ build/targets/java/retention.mf -C build/targets/java/retention .

$(TARGET_BIN) $(UNWIND_BIN) build/targets/threads-stripped build/targets/stripme-stripped build/targets/gopsy \
    build/targets/gostacks build/targets/goparked build/targets/java/Sleeper.class build/targets/java/Leaky.class build/targets/java/Burner.class \
    build/targets/java/retention.jar: | $(TEST_DEPS_STAMP)

# libdiagtop-agent.so: the native agent that programs load (LD_PRELOAD, or diagtop_agent_start() from
# include/diagtop-agent.h). It lives inside other programs: its own sources only (src/agent), nothing of diagtop's.
AGENT_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -g -fPIC -fvisibility=hidden
build/libdiagtop-agent.so: $(AGENT_SRC) $(wildcard src/agent/*.h include/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(AGENT_CFLAGS) -shared -Wl,-z,defs -o $@ $(AGENT_SRC) -ldl -lpthread $(AGENT_LIBS)

# The HPROF reader under libFuzzer (clang; tests/e2e/fuzz_hprof.sh runs it): offline/ and what it uses of util/.
FUZZ_SRC := $(wildcard src/actions/offline/h*.c) src/util/big_alloc.c src/util/grow.c
build/fuzz/fuzz_hprof: tests/fuzz/fuzz_hprof.c $(FUZZ_SRC) $(wildcard src/actions/offline/*.h src/util/*.h) | $(TEST_DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,FUZZ,$@)
	$(Q)clang -std=gnu11 -D_GNU_SOURCE -Isrc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -o $@ $< $(FUZZ_SRC) -lz -lpthread

# The core reader's notes walk under libFuzzer (tests/e2e/fuzz_core.sh runs it).
build/fuzz/fuzz_core: tests/fuzz/fuzz_core.c src/actions/offline/core_notes.c src/actions/offline/core_notes.h src/actions/dump/diagtop_note.h src/util/grow.c | $(TEST_DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,FUZZ,$@)
	$(Q)clang -std=gnu11 -D_GNU_SOURCE -Isrc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -o $@ $< src/actions/offline/core_notes.c src/util/grow.c

# The heap walker and the goroutine reader under libFuzzer (tests/e2e/fuzz_heap.sh runs it).
FUZZ_HEAP_SRC := src/actions/offline/glibc_heap.c src/actions/lang/go_runtime.c src/actions/lang/dwarf_layout.c \
    src/util/grow.c src/util/arena.c
build/fuzz/fuzz_heap: tests/fuzz/fuzz_heap.c $(FUZZ_HEAP_SRC) $(wildcard src/actions/offline/*.h src/actions/lang/*.h) | $(TEST_DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(call say,FUZZ,$@)
	$(Q)clang -std=gnu11 -D_GNU_SOURCE -Isrc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -o $@ $< $(FUZZ_HEAP_SRC) -ldw -lelf

asan: build/asan/diagtop
unit: $(UNIT_BIN)
targets: $(TARGET_BIN) build/targets/threads-stripped build/targets/stripme-stripped $(UNWIND_BIN) build/targets/gopsy \
         build/targets/gostacks build/targets/goparked build/targets/java/Sleeper.class build/targets/java/Leaky.class build/targets/java/Burner.class \
         build/targets/java/Locks.class build/targets/java/retention.jar

run: all
	./build/diagtop

test: $(TEST_DEPS_STAMP)
	@$(MAKE) --no-print-directory build/diagtop build/asan/diagtop $(AGENT_LIB) unit targets build/fuzz/fuzz_hprof \
	    build/fuzz/fuzz_core build/fuzz/fuzz_heap
	@tests/run $(T)

bench: $(TEST_DEPS_STAMP)
	@$(MAKE) --no-print-directory build/diagtop build/libdiagtop-agent.so targets
	@bench/refresh
	@bench/stack
	@bench/dump
	@bench/profile
	@bench/agents
	@bench/agent
	@bench/serve
	@bench/hprof
	@bench/analyze
	@bench/watch

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 build/diagtop $(DESTDIR)$(PREFIX)/bin/diagtop
	if [ -f build/libdiagtop-agent.so ]; then install -m 0755 build/libdiagtop-agent.so $(DESTDIR)$(PREFIX)/lib/; fi
	if [ -f include/diagtop-agent.h ]; then install -m 0644 include/diagtop-agent.h $(DESTDIR)$(PREFIX)/include/; fi
	install -m 0644 docs/diagtop.1 $(DESTDIR)$(PREFIX)/share/man/man1/diagtop.1

clean:
	rm -rf build

-include $(OBJ:.o=.d) $(ASAN_OBJ:.o=.d)

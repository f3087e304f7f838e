/* demangle: C++ (and legacy Rust) symbol names as a debugger shows them. */
#ifndef DIAGTOP_DEMANGLE_H
#define DIAGTOP_DEMANGLE_H

/* A malloc'd copy of name, demangled when it is a mangled C++ name and libstdc++ is on the system; NULL only for
 * NULL or out of memory. */
char *demangle_dup(const char *name);
#endif

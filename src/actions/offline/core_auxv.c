#include "core_auxv.h"

#include <elf.h>
#include <stddef.h>

#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#define AT_RSEQ_ALIGN 28
#endif
#ifndef AT_HWCAP3
#define AT_HWCAP3 29
#define AT_HWCAP4 30
#endif
#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

static const struct {
    unsigned long long type;
    const char *name, *about;
    enum core_auxv_format format;
} entries[] = {
    {AT_IGNORE, "AT_IGNORE", "Special entry type to be ignored", AUXV_HEX},
    {AT_EXECFD, "AT_EXECFD", "File descriptor of program", AUXV_DEC},
    {AT_PHDR, "AT_PHDR", "Program headers for program", AUXV_HEX},
    {AT_PHENT, "AT_PHENT", "Size of program header entry", AUXV_DEC},
    {AT_PHNUM, "AT_PHNUM", "Number of program headers", AUXV_DEC},
    {AT_PAGESZ, "AT_PAGESZ", "System page size", AUXV_DEC},
    {AT_BASE, "AT_BASE", "Base address of interpreter", AUXV_HEX},
    {AT_FLAGS, "AT_FLAGS", "Flags", AUXV_HEX},
    {AT_ENTRY, "AT_ENTRY", "Entry point of program", AUXV_HEX},
    {AT_NOTELF, "AT_NOTELF", "Program is not ELF", AUXV_DEC},
    {AT_UID, "AT_UID", "Real user ID", AUXV_DEC},
    {AT_EUID, "AT_EUID", "Effective user ID", AUXV_DEC},
    {AT_GID, "AT_GID", "Real group ID", AUXV_DEC},
    {AT_EGID, "AT_EGID", "Effective group ID", AUXV_DEC},
    {AT_PLATFORM, "AT_PLATFORM", "String identifying platform", AUXV_STR},
    {AT_HWCAP, "AT_HWCAP", "Machine-dependent CPU capability hints", AUXV_HEX},
    {AT_CLKTCK, "AT_CLKTCK", "Frequency of times()", AUXV_DEC},
    {AT_SECURE, "AT_SECURE", "Boolean, was exec setuid-like?", AUXV_DEC},
    {AT_BASE_PLATFORM, "AT_BASE_PLATFORM", "String identifying base platform", AUXV_STR},
    {AT_RANDOM, "AT_RANDOM", "Address of 16 random bytes", AUXV_HEX},
    {AT_HWCAP2, "AT_HWCAP2", "Extension of AT_HWCAP", AUXV_HEX},
    {AT_RSEQ_FEATURE_SIZE, "AT_RSEQ_FEATURE_SIZE", "rseq supported feature size", AUXV_DEC},
    {AT_RSEQ_ALIGN, "AT_RSEQ_ALIGN", "rseq allocation alignment", AUXV_DEC},
    {AT_HWCAP3, "AT_HWCAP3", "Extension of AT_HWCAP", AUXV_HEX},
    {AT_HWCAP4, "AT_HWCAP4", "Extension of AT_HWCAP", AUXV_HEX},
    {AT_EXECFN, "AT_EXECFN", "File name of executable", AUXV_STR},
    {AT_SYSINFO, "AT_SYSINFO", "Special system info/entry points", AUXV_HEX},
    {AT_SYSINFO_EHDR, "AT_SYSINFO_EHDR", "System-supplied DSO's ELF header", AUXV_HEX},
    {AT_MINSIGSTKSZ, "AT_MINSIGSTKSZ", "Minimal stack size for signal delivery", AUXV_DEC},
};

static int index_of(unsigned long long type)
{
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        if (entries[i].type == type) return (int)i;
    return -1;
}

const char *core_auxv_name(unsigned long long type)
{
    int i = index_of(type);
    return i < 0 ? NULL : entries[i].name;
}

const char *core_auxv_about(unsigned long long type)
{
    int i = index_of(type);
    return i < 0 ? "" : entries[i].about;
}

enum core_auxv_format core_auxv_format(unsigned long long type)
{
    int i = index_of(type);
    return i < 0 ? AUXV_HEX : entries[i].format;
}

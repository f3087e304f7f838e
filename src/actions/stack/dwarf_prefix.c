#include "dwarf_prefix.h"

#include <stdint.h>
#include <stdlib.h>

#include "util/bytes.h"
#include "util/protobuf.h"
#include "cu_index.h"

/* The forms that refer outside the unit that holds them (DWARF 5 §7.5.5, GNU extensions): a unit using one may
 * need another unit, anywhere in the section or in another file. DW_FORM_indirect names its form in the data. */
static int refers_outside(uint64_t form)
{
    return form == 0x10 /* ref_addr */ || form == 0x20 /* ref_sig8 */ || form == 0x1c /* ref_sup4 */ ||
           form == 0x24 /* ref_sup8 */ || form == 0x1f20 /* GNU_ref_alt */ || form == 0x16 /* indirect */;
}

/* Whether the abbreviation table at off uses only forms local to its unit; 0 when malformed too. ULEB128 is
 * protobuf's varint; an SLEB128 is skipped the same way. */
static int abbrevs_local(const unsigned char *abbrev, size_t len, uint64_t off)
{
    if (off >= len) return 0;
    struct pb_reader r;
    pb_reader_init(&r, abbrev + off, len - off);
    for (;;) {
        uint64_t code, tag, name, form, skip;
        if (pb_read_varint(&r, &code) < 0) return 0;
        if (code == 0) return 1;
        if (pb_read_varint(&r, &tag) < 0 || !pb_more(&r)) return 0;
        r.p++; /* DW_CHILDREN_yes or _no */
        do {
            if (pb_read_varint(&r, &name) < 0 || pb_read_varint(&r, &form) < 0) return 0;
            if (refers_outside(form)) return 0;
            if (form == 0x21 /* implicit_const: its value follows */ && pb_read_varint(&r, &skip) < 0) return 0;
        } while (name || form);
    }
}

/* Where the compilation unit at off ends, from its header (DWARF 2 to 5), or SIZE_MAX when it does not lie within
 * info[0, len), is no compile or partial unit, or uses a form that refers outside it. */
static size_t unit_end(const unsigned char *info, size_t len, uint64_t off, const unsigned char *abbrev,
                       size_t abbrev_len)
{
    if (off > len || len - off < 4) return SIZE_MAX;
    uint64_t length = bytes_le(info + off, 4);
    size_t header = 4, offsz = 4;
    if (length == 0xffffffff) { /* 64-bit DWARF */
        if (len - off < 12) return SIZE_MAX;
        length = bytes_le(info + off + 4, 8);
        header = 12;
        offsz = 8;
    } else if (length >= 0xfffffff0) {
        return SIZE_MAX;
    }
    if (length > len - off - header || length < 4 + offsz) return SIZE_MAX;
    const unsigned char *u = info + off + header;
    unsigned version = (unsigned)bytes_le(u, 2);
    uint64_t abbrev_off;
    if (version >= 2 && version <= 4) abbrev_off = bytes_le(u + 2, offsz);
    else if (version == 5 && (u[2] == 1 /* DW_UT_compile */ || u[2] == 3 /* DW_UT_partial */))
        abbrev_off = bytes_le(u + 4, offsz);
    else return SIZE_MAX;
    return abbrevs_local(abbrev, abbrev_len, abbrev_off) ? off + header + length : SIZE_MAX;
}

/* The units covering every address, noted in dp; returns where the unit after the last of them starts (the bytes
 * to inflate), SIZE_MAX when an address has no unit or the last one is the section's last. */
static size_t units_covering(struct dwarf_prefix *dp, const struct cu_index *ix)
{
    dp->units = malloc((dp->naddrs ? dp->naddrs : 1) * sizeof *dp->units);
    if (!dp->units) return SIZE_MAX;
    uint64_t last = 0;
    for (size_t i = 0; i < dp->naddrs; i++) {
        size_t cu = cu_index_unit_at(ix, dp->addrs[i]);
        if (cu == SIZE_MAX) return SIZE_MAX;
        dp->units[dp->nunits++] = ix->offs[cu];
        if (ix->offs[cu] > last) last = ix->offs[cu];
    }
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < ix->ncus; i++)
        if (ix->offs[i] > last && ix->offs[i] < next) next = ix->offs[i];
    return next < SIZE_MAX ? (size_t)next : SIZE_MAX;
}

static size_t wanted(void *arg, const struct elf_copy *copy)
{
    struct dwarf_prefix *dp = arg;
    unsigned long long load;
    size_t len;
    if (dp->naddrs == 0 || elf_copy_first_load(copy, &load) < 0 || load != dp->first_load) return SIZE_MAX;
    const unsigned char *aranges = elf_copy_section(copy, ".debug_aranges", &len);
    struct cu_index ix = {0};
    size_t want = aranges && cu_index_from_aranges(&ix, aranges, len) == 0 ? units_covering(dp, &ix) : SIZE_MAX;
    cu_index_free(&ix);
    return want;
}

static size_t end(void *arg, const struct elf_copy *copy, const unsigned char *info, size_t len)
{
    struct dwarf_prefix *dp = arg;
    size_t abbrev_len, last = 0;
    const unsigned char *abbrev = elf_copy_section(copy, ".debug_abbrev", &abbrev_len);
    if (!abbrev) return SIZE_MAX;
    for (size_t i = 0; i < dp->nunits; i++) {
        size_t e = unit_end(info, len, dp->units[i], abbrev, abbrev_len);
        if (e == SIZE_MAX) return SIZE_MAX;
        if (e > last) last = e;
    }
    return last;
}

struct inflate_part dwarf_prefix_part(struct dwarf_prefix *dp)
{
    return (struct inflate_part){.section = ".debug_info", .wanted = wanted, .end = end, .arg = dp};
}

void dwarf_prefix_free(struct dwarf_prefix *dp)
{
    free(dp->units);
    dp->units = NULL;
    dp->nunits = 0;
}

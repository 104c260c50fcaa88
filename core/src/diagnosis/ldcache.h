// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The dynamic loader's cache (/etc/ld.so.cache, written by ldconfig), read without
/// running anything. Only glibc's "glibc-ld.so.cache1.1" format is understood, standalone
/// (glibc >= 2.32) or appended to the old "ld.so-1.7.0" table (older ldconfig's "compat"
/// output); a missing or unreadable cache is empty. Exported though private, for tst_elfdeps.
class SWITCHYARD_CORE_EXPORT LdCache {
public:
    struct Entry {
        std::int32_t flags = 0;  // FLAG_ELF_LIBC6 | FLAG_X8664_LIB64, ... (glibc ldconfig.h)
        std::string soname;      // the key, "libz.so.1"
        std::string path;        // the value, "/lib/x86_64-linux-gnu/libz.so.1"
        std::uint64_t hwcap = 0; // non-zero: a glibc-hwcaps or legacy hwcap subfolder entry
    };

    /// Parses `data` (the cache's bytes); `error` says why nothing was read.
    static LdCache parse(std::string_view data, std::string* error = nullptr);
    /// Reads and parses a cache file.
    static LdCache read(const std::string& path, std::string* error = nullptr);
    /// The process-wide cache of /etc/ld.so.cache, re-read when its mtime or size changes.
    static std::shared_ptr<const LdCache> system();

    /// Every entry for `soname`, in cache order (the loader's order).
    std::vector<const Entry*> find(std::string_view soname) const;
    const std::vector<Entry>& entries() const noexcept { return m_entries; }
    bool empty() const noexcept { return m_entries.empty(); }
    /// The file the entries came from, when read().
    const std::string& path() const noexcept { return m_path; }

private:
    std::vector<Entry> m_entries; // sorted by soname (stable: keeps the cache's order)
    std::string m_path;
};

} // namespace switchyard

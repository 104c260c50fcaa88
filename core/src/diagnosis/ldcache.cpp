// SPDX-License-Identifier: MIT
#include "diagnosis/ldcache.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#include <sys/stat.h>

namespace switchyard {
namespace {

// glibc sysdeps/generic/dl-cache.h, "new format".
constexpr std::string_view kMagicNew = "glibc-ld.so.cache";
constexpr std::string_view kVersionNew = "1.1";
constexpr std::size_t kHeaderSize =
    48; // magic[17] version[3] nlibs len_strings flags pad[3] ext_off unused[3]
constexpr std::size_t kEntrySize =
    24; // int32 flags, uint32 key, uint32 value, uint32 osversion, uint64 hwcap
// cache_file_new.flags: 2 little endian, 3 big endian (0: written by an old ldconfig, native).
constexpr std::uint8_t kLittleEndian = 2;
constexpr std::uint8_t kBigEndian = 3;

template <class T> T read_at(std::string_view data, std::size_t offset) {
    T value{};
    std::memcpy(&value, data.data() + offset, sizeof(T));
    return value;
}

std::string c_string_at(std::string_view data, std::size_t offset) {
    if (offset >= data.size())
        return {};
    const auto end = data.find('\0', offset);
    return std::string(
        data.substr(offset, end == std::string_view::npos ? std::string_view::npos : end - offset));
}

} // namespace

LdCache LdCache::parse(std::string_view data, std::string* error) {
    LdCache cache;
    auto fail = [&](const std::string& why) {
        if (error)
            *error = why;
        return LdCache{};
    };
    // Standalone new format, or the old table followed by the new one ("compat" format).
    const auto start = data.find(std::string(kMagicNew) + std::string(kVersionNew));
    if (start == std::string_view::npos)
        return fail("not a glibc-ld.so.cache1.1 file");
    const auto table = data.substr(start);
    if (table.size() < kHeaderSize)
        return fail("truncated header");
    const auto nlibs = read_at<std::uint32_t>(table, 20);
    const auto order = read_at<std::uint8_t>(table, 28);
    const bool little = std::endian::native == std::endian::little;
    if ((order == kLittleEndian && !little) || (order == kBigEndian && little))
        return fail("written for the other byte order");
    if (nlibs > (table.size() - kHeaderSize) / kEntrySize)
        return fail("truncated: " + std::to_string(nlibs) + " entries announced");
    cache.m_entries.reserve(nlibs);
    for (std::uint32_t i = 0; i < nlibs; ++i) {
        const std::size_t at = kHeaderSize + std::size_t(i) * kEntrySize;
        Entry e;
        e.flags = read_at<std::int32_t>(table, at);
        // String offsets are relative to the new header (glibc: cache_data = cache_new).
        e.soname = c_string_at(table, read_at<std::uint32_t>(table, at + 4));
        e.path = c_string_at(table, read_at<std::uint32_t>(table, at + 8));
        e.hwcap = read_at<std::uint64_t>(table, at + 16);
        if (!e.soname.empty() && !e.path.empty())
            cache.m_entries.push_back(std::move(e));
    }
    std::stable_sort(cache.m_entries.begin(), cache.m_entries.end(),
                     [](const Entry& a, const Entry& b) { return a.soname < b.soname; });
    return cache;
}

LdCache LdCache::read(const std::string& path, std::string* error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (error)
            *error = "cannot open " + path;
        return {};
    }
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto cache = parse(data, error);
    cache.m_path = path;
    return cache;
}

std::shared_ptr<const LdCache> LdCache::system() {
    static std::mutex mutex;
    static std::shared_ptr<const LdCache> cached;
    static struct timespec cached_mtime {};
    static off_t cached_size = -1;
    constexpr const char* kPath = "/etc/ld.so.cache";
    struct stat st {};
    const bool exists = ::stat(kPath, &st) == 0;
    std::lock_guard lock(mutex);
    if (cached && exists && st.st_size == cached_size && st.st_mtim.tv_sec == cached_mtime.tv_sec &&
        st.st_mtim.tv_nsec == cached_mtime.tv_nsec)
        return cached;
    if (cached && !exists && cached_size == -1)
        return cached;
    cached = std::make_shared<const LdCache>(exists ? read(kPath) : LdCache{});
    cached_size = exists ? st.st_size : -1;
    cached_mtime = exists ? st.st_mtim : timespec{};
    return cached;
}

std::vector<const LdCache::Entry*> LdCache::find(std::string_view soname) const {
    std::vector<const Entry*> out;
    auto it = std::lower_bound(m_entries.begin(), m_entries.end(), soname,
                               [](const Entry& e, std::string_view s) { return e.soname < s; });
    for (; it != m_entries.end() && it->soname == soname; ++it)
        out.push_back(&*it);
    return out;
}

} // namespace switchyard

// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

namespace detail {
/// The process-wide id of a tuple of strings: equal tuples get equal ids, different
/// tuples different ones (a locked intern table; ids are never reused).
std::uint64_t intern_tuple(const std::vector<std::string>& parts);
} // namespace detail

/// An ordered tuple of strings, the key of a TupleRegistry cell. Keys are interned at
/// construction: equality is one integer comparison and the hash is computed once, so
/// resolving a fallback chain never compares strings.
class TupleKey {
public:
    TupleKey() = default;
    TupleKey(std::initializer_list<std::string_view> parts) {
        m_parts.reserve(parts.size());
        for (auto p : parts)
            m_parts.emplace_back(p);
        rehash();
    }
    explicit TupleKey(std::vector<std::string> parts) : m_parts(std::move(parts)) { rehash(); }

    const std::vector<std::string>& parts() const noexcept { return m_parts; }
    std::size_t size() const noexcept { return m_parts.size(); }
    const std::string& operator[](std::size_t i) const { return m_parts[i]; }
    std::size_t hash() const noexcept { return m_hash; }
    /// The interned id: equal keys, equal ids.
    std::uint64_t id() const noexcept { return m_id; }

    /// "(gemm, cuda, sm_90, default)"
    std::string to_string() const {
        std::string s = "(";
        for (std::size_t i = 0; i < m_parts.size(); ++i) {
            if (i)
                s += ", ";
            s += m_parts[i];
        }
        return s + ")";
    }

    friend bool operator==(const TupleKey& a, const TupleKey& b) noexcept {
        return a.m_id == b.m_id;
    }
    /// Orders as Python orders tuples of str (code point order == UTF-8 byte order).
    friend bool operator<(const TupleKey& a, const TupleKey& b) noexcept {
        return a.m_parts < b.m_parts;
    }

private:
    void rehash() {
        m_id = detail::intern_tuple(m_parts);
        // ids are sequential: spread them over the table (Fibonacci hashing)
        std::uint64_t h = m_id * 0x9e3779b97f4a7c15ull;
        m_hash = std::size_t(h ^ (h >> 32));
    }

    std::vector<std::string> m_parts;
    std::uint64_t m_id = 0; // the empty tuple's id
    std::size_t m_hash = 0;
};

struct TupleKeyHash {
    std::size_t operator()(const TupleKey& key) const noexcept { return key.hash(); }
};

} // namespace switchyard

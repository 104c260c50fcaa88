// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

namespace detail {
/// One tuple of strings as the process-wide intern table keeps it: once per distinct tuple,
/// never freed, never moved. Equal tuples get the same entry (and id), different tuples
/// different ones; ids are never reused.
struct SWITCHYARD_CORE_EXPORT InternedTuple {
    std::vector<std::string> parts;
    std::uint64_t id = 0;
    std::size_t hash = 0;
};
/// The entry of `parts` (a locked intern table; the parts are copied only the first time).
SWITCHYARD_CORE_EXPORT const InternedTuple* intern_tuple(const std::string_view* parts,
                                                         std::size_t count);
SWITCHYARD_CORE_EXPORT const InternedTuple* intern_tuple(const std::vector<std::string>& parts);
/// The empty tuple's parts (id 0).
SWITCHYARD_CORE_EXPORT const std::vector<std::string>& empty_tuple_parts() noexcept;
} // namespace detail

/// An ordered tuple of strings, the key of a TupleRegistry cell. Keys are interned at
/// construction: equality is one integer comparison and the hash is computed once, so
/// resolving a fallback chain never compares strings. A key refers to the intern table's
/// one copy of its strings, so copying a key copies no string.
class SWITCHYARD_CORE_EXPORT TupleKey {
public:
    TupleKey() = default;
    TupleKey(std::initializer_list<std::string_view> parts) {
        set(detail::intern_tuple(parts.begin(), parts.size()));
    }
    explicit TupleKey(const std::vector<std::string>& parts) { set(detail::intern_tuple(parts)); }
    /// The key of an intern table entry (detail::intern_tuple()'s answer).
    explicit TupleKey(const detail::InternedTuple* tuple) noexcept { set(tuple); }

    const std::vector<std::string>& parts() const noexcept {
        return m_tuple ? m_tuple->parts : detail::empty_tuple_parts();
    }
    std::size_t size() const noexcept { return m_tuple ? m_tuple->parts.size() : 0; }
    const std::string& operator[](std::size_t i) const { return m_tuple->parts[i]; }
    std::size_t hash() const noexcept { return m_hash; }
    /// The interned id: equal keys, equal ids.
    std::uint64_t id() const noexcept { return m_id; }

    /// "(gemm, cuda, sm_90, default)"
    std::string to_string() const {
        std::string s = "(";
        const auto& p = parts();
        for (std::size_t i = 0; i < p.size(); ++i) {
            if (i)
                s += ", ";
            s += p[i];
        }
        return s + ")";
    }

    friend bool operator==(const TupleKey& a, const TupleKey& b) noexcept {
        return a.m_id == b.m_id;
    }
    /// Orders as Python orders tuples of str (code point order == UTF-8 byte order).
    friend bool operator<(const TupleKey& a, const TupleKey& b) noexcept {
        return a.m_id != b.m_id && a.parts() < b.parts();
    }

private:
    void set(const detail::InternedTuple* tuple) noexcept {
        m_tuple = tuple->id ? tuple : nullptr;
        m_id = tuple->id;
        m_hash = tuple->hash;
    }

    const detail::InternedTuple* m_tuple = nullptr; // null: the empty tuple
    std::uint64_t m_id = 0;                         // the empty tuple's id
    std::size_t m_hash = 0;
};

struct SWITCHYARD_CORE_EXPORT TupleKeyHash {
    std::size_t operator()(const TupleKey& key) const noexcept { return key.hash(); }
};

} // namespace switchyard

// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// An ordered tuple of strings, the key of a TupleRegistry cell. The hash is computed
/// once at construction, so a prepared fallback chain resolves without rehashing.
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
        return a.m_hash == b.m_hash && a.m_parts == b.m_parts;
    }
    /// Orders as Python orders tuples of str (code point order == UTF-8 byte order).
    friend bool operator<(const TupleKey& a, const TupleKey& b) noexcept {
        return a.m_parts < b.m_parts;
    }

private:
    void rehash() noexcept {
        std::size_t h = 0xcbf29ce484222325ull ^ m_parts.size();
        for (const auto& p : m_parts)
            h = (h ^ std::hash<std::string_view>{}(p)) * 0x100000001b3ull + (h >> 29);
        m_hash = h;
    }

    std::vector<std::string> m_parts;
    std::size_t m_hash = 0;
};

struct TupleKeyHash {
    std::size_t operator()(const TupleKey& key) const noexcept { return key.hash(); }
};

} // namespace switchyard

// SPDX-License-Identifier: MIT
#pragma once

// The SDK's inline internals, not its interface: the open-addressing table a TupleRegistry
// snapshot is. Plugin code compiles it (TupleRegistry is a template) but never names it; it
// may change with any contract revision (docs/plugins.md, "Compatibility").

#include <switchyard/sdk/tuplekey.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace switchyard::detail {

// An immutable open-addressing table (linear probing, power-of-two capacity) over the
// registry's cell pointers, which the registry frees only once no reader can reach them. An
// entry whose key an earlier entry has takes the earlier one's place (the later cell wins,
// where the first was); its own is dropped, and the earlier one is added to `dropped`.
template <class CellPtr> class CellTable {
public:
    CellTable() = default;
    explicit CellTable(std::vector<const CellPtr*> entries,
                       std::vector<const CellPtr*>* dropped = nullptr)
        : m_entries(std::move(entries)) {
        std::size_t cap = 8;
        while (cap < m_entries.size() * 4) // load <= 1/4: misses end at once
            cap <<= 1;
        m_mask = cap - 1;
        if (!index_entries(cap, dropped)) {
            // Keys met twice: each later cell took its key's first place; drop its own.
            std::erase(m_entries, nullptr);
            index_entries(cap);
        }
    }
    const CellPtr* find_slot(const TupleKey& key) const noexcept {
        if (m_slots.empty())
            return nullptr;
        const auto tag = static_cast<std::uint32_t>(key.hash());
        for (std::size_t i = key.hash() & m_mask;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.index == 0)
                return nullptr;
            if (s.tag == tag && (*m_entries[s.index - 1])->key == key)
                return m_entries[s.index - 1];
        }
    }
    CellPtr find(const TupleKey& key) const {
        const CellPtr* slot = find_slot(key);
        return slot ? *slot : nullptr;
    }
    const std::vector<const CellPtr*>& entries() const noexcept { return m_entries; }
    std::size_t size() const noexcept { return m_entries.size(); }

private:
    // 8 bytes: the key's hash (its low half) and the entry's position + 1 (0: empty).
    struct Slot {
        std::uint32_t tag = 0;
        std::uint32_t index = 0;
    };
    // Fills the slots; false when a key was met twice (the later entry then moved to the
    // earlier one's position, leaving nullptr at its own, and the earlier one went to
    // `dropped`).
    bool index_entries(std::size_t cap, std::vector<const CellPtr*>* dropped = nullptr) {
        m_slots.assign(cap, Slot{});
        bool unique = true;
        for (std::size_t n = 0; n < m_entries.size(); ++n) {
            const CellPtr* e = m_entries[n];
            const std::size_t hash = (*e)->key.hash();
            const auto tag = static_cast<std::uint32_t>(hash);
            std::size_t i = hash & m_mask;
            for (; m_slots[i].index != 0; i = (i + 1) & m_mask) {
                const Slot& s = m_slots[i];
                if (s.tag == tag && (*m_entries[s.index - 1])->key == (*e)->key)
                    break;
            }
            if (m_slots[i].index != 0) {
                if (dropped)
                    dropped->push_back(m_entries[m_slots[i].index - 1]);
                m_entries[m_slots[i].index - 1] = e;
                m_entries[n] = nullptr;
                unique = false;
                continue;
            }
            m_slots[i] = Slot{tag, static_cast<std::uint32_t>(n + 1)};
        }
        return unique;
    }

    std::vector<const CellPtr*> m_entries;
    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
};

} // namespace switchyard::detail

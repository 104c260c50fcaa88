// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/detail/celltable.h>
#include <switchyard/sdk/detail/chainmemo.h>
#include <switchyard/sdk/detail/reclaim.h>
#include <switchyard/sdk/tuplekey.h>
#include <switchyard/sdk/value.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace switchyard {

namespace detail {
SWITCHYARD_CORE_EXPORT std::uint64_t next_registry_id() noexcept;

/// While a TupleRegistry lists its cells (manifest()), the calling thread has a nonzero
/// epoch, one per listing: a predicate shared by many cells (a plugin's placeholders) may
/// answer once per epoch. Zero outside a listing.
SWITCHYARD_CORE_EXPORT std::uint64_t availability_epoch() noexcept;
class SWITCHYARD_CORE_EXPORT AvailabilityEpoch {
public:
    AvailabilityEpoch() noexcept;
    ~AvailabilityEpoch();
    AvailabilityEpoch(const AvailabilityEpoch&) = delete;
    AvailabilityEpoch& operator=(const AvailabilityEpoch&) = delete;

private:
    std::uint64_t m_saved;
};
} // namespace detail

/// One cell of a TupleRegistry: a key, the implementation, an availability predicate,
/// where it came from, and declared metadata (for kernels: workspace_bytes).
///
/// A cell declared by a plugin manifest but not yet loaded has no `fn` and a `loader`;
/// resolve_first() calls the loader when the chain reaches such a cell, and the loader
/// replaces the placeholder with the real registration (or leaves it unavailable).
/// Where a cell (and the backend owning it) came from, in priority order: an earlier
/// source wins a name. to_string() gives the ids of the JSON outputs.
enum class CellSource { Registered, Builtin, Plugin };
/// "registered", "builtin", "plugin".
SWITCHYARD_CORE_EXPORT std::string_view to_string(CellSource source) noexcept;

template <class Fn> struct Registration {
    TupleKey key;
    Fn fn;
    std::function<bool()> available; // empty means always available
    CellSource source = CellSource::Registered;
    std::string backend; // owning backend's name
    /// What the matrix shows beside the key ("requires", "isa", "threads", "runs_as", ...):
    /// an object.
    Value meta = Value::object();
    std::function<void()> loader; // only for declared-but-not-loaded cells
    /// Kernels: the scratch bytes the kernel needs (KernelSpec::workspace_bytes, or the
    /// manifest's); 0 for components. `meta` holds the same value under "workspace_bytes"
    /// for the seed's flat manifest rows (registry/manifestrows.h).
    std::int64_t workspace_bytes = 0;

    bool is_loaded() const noexcept { return static_cast<bool>(fn); }

    /// The predicate's verdict; an exception inside it means "unavailable".
    bool is_available() const noexcept {
        if (!available)
            return true;
        try {
            return available();
        } catch (...) {
            return false;
        }
    }
};

template <class Fn> class TupleRegistry;

/// What resolve_first() returns: the winning cell, or none. No reference count: a pin on the
/// calling thread's reader record (sdk/detail/reclaim.h), plain stores on that thread's data.
///
/// The lifetime rule: a cell that put() replaces or erase()/clear() removes is retired, and a
/// retired cell is freed only once no CellRef taken before it was retired lives (epoch-based
/// reclamation). So a CellRef stays valid until it is destroyed or its registry is, whatever
/// other threads put, erase or rescan meanwhile. A CellRef may be copied, moved and destroyed
/// on any thread. It holds back the reclamation of everything retired while it lives: keep it
/// for a call or a dispatch, and convert it to a CellPtr (std::shared_ptr, implicit, or
/// share()) to keep the cell longer or beyond the registry's life; that one owns the cell.
template <class Fn> class CellRef {
public:
    using Cell = Registration<Fn>;
    using CellPtr = std::shared_ptr<const Cell>;

    CellRef() = default;
    CellRef(std::nullptr_t) noexcept {}
    CellRef(const CellRef& other)
        : m_owner(other.m_owner),
          m_pin(other.m_pin ? detail::pin(other.m_pin->epoch.load(std::memory_order_relaxed))
                            : nullptr) {}
    CellRef(CellRef&& other) noexcept
        : m_owner(std::exchange(other.m_owner, nullptr)),
          m_pin(std::exchange(other.m_pin, nullptr)) {}
    CellRef& operator=(CellRef other) noexcept {
        std::swap(m_owner, other.m_owner);
        std::swap(m_pin, other.m_pin);
        return *this;
    }
    ~CellRef() {
        if (m_pin)
            detail::unpin(m_pin);
    }

    explicit operator bool() const noexcept { return m_owner != nullptr; }
    const Cell* get() const noexcept { return m_owner ? m_owner->get() : nullptr; }
    const Cell& operator*() const noexcept { return **m_owner; }
    const Cell* operator->() const noexcept { return m_owner->get(); }

    /// Shared ownership of the cell, valid after the registry is gone (null for none).
    CellPtr share() const { return m_owner ? *m_owner : CellPtr(); }
    operator CellPtr() const { return share(); }

private:
    friend class TupleRegistry<Fn>;
    // Adopts `pin`, the pin under which `owner` was found.
    CellRef(const CellPtr* owner, detail::ReaderRecord* pin) noexcept
        : m_owner(owner), m_pin(pin) {}
    const CellPtr* m_owner = nullptr;      // the registry's own pointer to the cell
    detail::ReaderRecord* m_pin = nullptr; // set exactly when m_owner is
};

/// A fallback chain prepared for repeated resolution: it remembers which of its keys the
/// registry declares, per registry generation, so resolving again only re-checks the
/// declared cells' availability (the answer is the same as resolve_first over the keys).
/// Not thread-safe: give each thread its own copy.
template <class Fn> class PreparedChain {
public:
    PreparedChain() = default;
    explicit PreparedChain(std::vector<TupleKey> keys) : m_keys(std::move(keys)) {}
    const std::vector<TupleKey>& keys() const noexcept { return m_keys; }

private:
    friend class TupleRegistry<Fn>;
    std::vector<TupleKey> m_keys;
    std::uint64_t m_registry = 0;
    std::uint64_t m_generation = ~0ull;
    // The registry's pointers to the declared cells, read only in m_generation (and pinned).
    std::vector<const std::shared_ptr<const Registration<Fn>>*> m_declared;
    bool m_has_placeholder = false;
};

/// A registry keyed by an ordered tuple of strings, with availability-aware resolution
/// (the seed kernel registry's TupleRegistry). Thread-safe: mutation takes a mutex and publishes an
/// immutable snapshot; lookups read the snapshot without locking. A replaced or removed cell is
/// retired and freed once no reader can reach it (see CellRef; reclaim()).
template <class Fn> class TupleRegistry {
public:
    using Cell = Registration<Fn>;
    using CellPtr = std::shared_ptr<const Cell>;
    using Ref = CellRef<Fn>;

    struct ManifestEntry {
        CellPtr cell;
        bool available = false;
    };

    TupleRegistry(std::string name, std::vector<std::string> key_fields)
        : m_name(std::move(name)), m_fields(std::move(key_fields)),
          m_id(detail::next_registry_id()), m_table(std::make_shared<Table>()) {}

    TupleRegistry(const TupleRegistry&) = delete;
    TupleRegistry& operator=(const TupleRegistry&) = delete;

    ~TupleRegistry() {
        for (const CellPtr* owner : m_table->entries())
            delete owner;
        for (auto& batch : m_retired)
            for (const CellPtr* owner : batch.cells)
                delete owner;
    }

    const std::string& name() const noexcept { return m_name; }
    const std::vector<std::string>& key_fields() const noexcept { return m_fields; }

    /// Throws std::invalid_argument when the key's arity does not match the fields.
    void check_key(const TupleKey& key) const {
        if (key.size() != m_fields.size()) {
            std::string fields;
            for (const auto& f : m_fields)
                fields += (fields.empty() ? "" : ", ") + f;
            throw std::invalid_argument(m_name + ": key " + key.to_string() + " has " +
                                        std::to_string(key.size()) + " fields but (" + fields +
                                        ") needs " + std::to_string(m_fields.size()));
        }
    }

    /// Declares (or replaces) one cell.
    void put(Cell cell) {
        std::vector<Cell> one;
        one.push_back(std::move(cell));
        put_all(std::move(one));
    }

    /// Declares several cells at once: all become visible together or none does.
    void put_all(std::vector<Cell> cells) {
        replace_if([](const Cell&) { return false; }, std::move(cells));
    }
    /// The same for cells already shared (a large batch is then never held twice).
    void put_all(std::vector<CellPtr> cells) {
        replace_if([](const Cell&) { return false; }, std::move(cells));
    }

    /// In one step: removes the cells matching `pred`, then declares `cells`. Removed and
    /// replaced cells are retired, and freed once no reader can reach them (CellRef's rule).
    template <class Pred> void replace_if(Pred pred, std::vector<Cell> cells) {
        std::vector<CellPtr> shared;
        shared.reserve(cells.size());
        for (auto& c : cells)
            shared.push_back(std::make_shared<const Cell>(std::move(c)));
        replace_if(std::move(pred), std::move(shared));
    }

    template <class Pred> void replace_if(Pred pred, std::vector<CellPtr> cells) {
        for (const auto& c : cells) {
            if (!c)
                throw std::invalid_argument(m_name + ": a null cell");
            check_key(c->key);
        }
        std::unique_lock lock(m_mutex);
        auto entries = m_table->entries();
        std::vector<const CellPtr*> retired = take_matching(entries, pred);
        const std::size_t survivors = entries.size();
        // Where a new cell goes, found without indexing every entry (a plugin's load must not
        // cost a pass that allocates per cell of every other plugin): a key the current table
        // holds and `pred` keeps is replaced in place, any other is appended (a later cell of
        // the same key then replaces the earlier one in place: the new Table does that).
        std::unordered_map<const CellPtr*, const CellPtr*> replaced; // surviving -> new
        entries.reserve(entries.size() + cells.size());
        for (auto& c : cells) {
            const CellPtr* owner = new CellPtr(std::move(c));
            if (const CellPtr* old = m_table->find_slot((*owner)->key); old && !pred(**old)) {
                auto [it, first] = replaced.try_emplace(old, owner);
                if (!first) // the batch names the key twice: the earlier was never published
                    delete std::exchange(it->second, owner);
                continue;
            }
            entries.push_back(owner);
        }
        if (!replaced.empty())
            for (std::size_t i = 0; i < survivors; ++i)
                if (auto it = replaced.find(entries[i]); it != replaced.end()) {
                    retired.push_back(entries[i]);
                    entries[i] = it->second;
                }
        publish(std::move(entries), std::move(retired), lock);
    }

    /// Removes the cells matching `pred`; returns how many were removed.
    template <class Pred> std::size_t erase_if(Pred pred) {
        std::unique_lock lock(m_mutex);
        auto entries = m_table->entries();
        std::vector<const CellPtr*> retired = take_matching(entries, pred);
        const std::size_t removed = retired.size();
        if (removed)
            publish(std::move(entries), std::move(retired), lock);
        return removed;
    }

    bool erase(const TupleKey& key) {
        return erase_if([&](const Cell& c) { return c.key == key; }) > 0;
    }

    void clear() {
        std::unique_lock lock(m_mutex);
        publish({}, m_table->entries(), lock);
    }

    /// Frees the retired cells no reader can reach any more; returns how many. Mutation calls
    /// it on its own once enough cells are retired; a rescan calls it when it is done.
    std::size_t reclaim() {
        std::unique_lock lock(m_mutex);
        auto garbage = take_unreachable();
        lock.unlock();
        for (const CellPtr* owner : garbage)
            delete owner;
        return garbage.size();
    }

    /// Exact lookup, ignoring availability.
    CellPtr lookup(const TupleKey& key) const {
        check_key(key);
        const detail::ReadPin pin;
        return snapshot()->find(key);
    }

    /// The first candidate that is declared and available wins (the fallback chain).
    /// A declared-but-not-loaded plugin cell is loaded on the way. The calling thread
    /// remembers which rungs of its recent chains are declared (per registry generation),
    /// so an unchanged registry answers with integer compares and the availability checks.
    /// The answer is a CellRef (valid while it lives, see its rule); convert it to a CellPtr
    /// to own the cell.
    Ref resolve_first(std::span<const TupleKey> chain) const {
        detail::ReadPin pin; // before the generation is read: the memo's cells stay
        const ChainMemo* memo = chain_memo(chain);
        if (!memo || memo->has_placeholder) [[unlikely]]
            return resolve_walk(chain, pin);
        for (std::uint32_t i = 0; i < memo->declared_count; ++i)
            if (memo_cell(*memo, i)->is_available())
                return Ref(memo_owner(*memo, i), pin.release());
        return Ref();
    }

    Ref resolve_first(std::initializer_list<TupleKey> chain) const {
        return resolve_first(std::span<const TupleKey>(chain.begin(), chain.size()));
    }

    /// resolve_first() for a prepared chain: one atomic load when the registry is unchanged.
    Ref resolve_first(PreparedChain<Fn>& chain) const {
        detail::ReadPin pin;
        if (chain.m_registry != m_id ||
            chain.m_generation != m_generation.load(std::memory_order_acquire)) {
            std::lock_guard lock(m_mutex);
            chain.m_declared.clear();
            chain.m_has_placeholder = false;
            for (const auto& key : chain.m_keys) {
                check_key(key);
                if (const CellPtr* owner = m_table->find_slot(key)) {
                    chain.m_has_placeholder |= !(*owner)->is_loaded();
                    chain.m_declared.push_back(owner);
                }
            }
            chain.m_registry = m_id;
            chain.m_generation = m_generation.load(std::memory_order_relaxed);
        }
        if (chain.m_has_placeholder) // loading plugins on the way: take the general path
            return resolve_first(std::span<const TupleKey>(chain.m_keys));
        for (const CellPtr* owner : chain.m_declared)
            if ((*owner)->is_available())
                return Ref(owner, pin.release());
        return Ref();
    }

    /// Every declared cell, available or not, sorted by the key rendered as strings.
    std::vector<ManifestEntry> manifest() const {
        const detail::ReadPin pin;
        auto table = snapshot();
        const auto& entries = table->entries();
        // Sorted as the keys' strings sort (field by field), through each field's distinct
        // strings ranked once: the sort then compares small integers, not strings.
        const std::size_t arity = m_fields.size();
        const std::size_t n = entries.size();
        std::vector<std::uint32_t> ranks(n * arity);
        std::vector<std::uint32_t*> rank_of(n); // each entry's slot in `distinct`
        for (std::size_t f = 0; f < arity; ++f) {
            std::unordered_map<std::string_view, std::uint32_t> distinct;
            for (std::size_t i = 0; i < n; ++i)
                rank_of[i] = &distinct.try_emplace((*entries[i])->key[f], 0).first->second;
            std::vector<std::pair<std::string_view, std::uint32_t*>> sorted;
            sorted.reserve(distinct.size());
            for (auto& [text, rank] : distinct)
                sorted.emplace_back(text, &rank);
            std::sort(sorted.begin(), sorted.end());
            for (std::size_t r = 0; r < sorted.size(); ++r)
                *sorted[r].second = std::uint32_t(r);
            for (std::size_t i = 0; i < n; ++i)
                ranks[i * arity + f] = *rank_of[i];
        }
        std::vector<std::uint32_t> order(n);
        for (std::size_t i = 0; i < n; ++i)
            order[i] = std::uint32_t(i);
        std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            const std::uint32_t* ra = &ranks[std::size_t(a) * arity];
            const std::uint32_t* rb = &ranks[std::size_t(b) * arity];
            return std::lexicographical_compare(ra, ra + arity, rb, rb + arity);
        });
        std::vector<ManifestEntry> rows;
        rows.reserve(n);
        const detail::AvailabilityEpoch epoch;
        for (std::uint32_t i : order)
            rows.push_back({*entries[i], (*entries[i])->is_available()});
        return rows;
    }

    std::size_t size() const { return snapshot()->size(); }

    /// How many cells this registry holds: declared, or retired and not yet freed.
    std::size_t cells_held() const {
        std::lock_guard lock(m_mutex);
        return m_table->size() + m_retired_count;
    }

private:
    using Table = detail::CellTable<CellPtr>; // sdk/detail/celltable.h

    // The general path: walks the chain in the current table, loading placeholders. The
    // caller's pin covers the walk and passes to the answer.
    Ref resolve_walk(std::span<const TupleKey> chain, detail::ReadPin& pin) const {
        const Table* table = &current();
        for (const auto& key : chain) {
            const CellPtr* found = table->find_slot(key);
            if (!found)
                continue;
            const Cell& cell = **found;
            if (!cell.is_available())
                continue;
            if (cell.is_loaded())
                return Ref(found, pin.release());
            auto loader = cell.loader; // the table may be replaced while it runs
            if (loader) {
                try {
                    loader();
                } catch (...) {
                }
            }
            const CellPtr* fresh = current().find_slot(key);
            if (fresh && (*fresh)->is_loaded() && (*fresh)->is_available())
                return Ref(fresh, pin.release());
            table = &current();
        }
        return Ref();
    }

    static constexpr std::size_t kMemoRungs = detail::kMemoRungs;
    static constexpr std::size_t kMemos = detail::kChainMemos;
    using ChainMemo = detail::ChainMemo; // sdk/detail/chainmemo.h
    static const Cell* memo_cell(const ChainMemo& memo, std::uint32_t i) noexcept {
        return static_cast<const Cell*>(memo.cells[i]);
    }
    static const CellPtr* memo_owner(const ChainMemo& memo, std::uint32_t i) noexcept {
        return static_cast<const CellPtr*>(memo.owners[i]);
    }

    // nullptr when the chain is too long to remember.
    [[gnu::always_inline]] const ChainMemo* chain_memo(std::span<const TupleKey> chain) const {
        if (chain.size() > kMemoRungs)
            return nullptr;
        ChainMemo* memos = detail::thread_chain_memos();
        // The slot: from the ends of the chain (chains differ there; ids are sequential, so
        // their low bits spread), with no multiply on the path to the memo's address.
        const std::uint64_t fingerprint =
            chain.empty() ? m_id
                          : chain.front().id() ^ (chain.back().id() << 1) ^ chain.size() ^ m_id;
        const std::size_t index = fingerprint & (kMemos - 1);
        ChainMemo& memo = memos[index];
        // One branch for the whole check: the differences are or-ed together.
        std::uint64_t diff = (memo.registry ^ m_id) | (memo.size ^ chain.size()) |
                             (memo.generation ^ m_generation.load(std::memory_order_acquire));
        diff |= detail::chain_ids_differ(memo.ids, chain.data(), chain.size());
        if (diff == 0) [[likely]]
            return &memo;
        return rebuild_memo(memo, chain);
    }

    // The slow half of chain_memo(), out of line so the hot half stays small.
    [[gnu::noinline]] const ChainMemo* rebuild_memo(ChainMemo& memo,
                                                    std::span<const TupleKey> chain) const {
        for (const auto& key : chain)
            check_key(key);
        std::shared_ptr<const Table> table;
        {
            std::lock_guard lock(m_mutex);
            table = m_table;
            memo.generation = m_generation.load(std::memory_order_relaxed);
        }
        memo.registry = m_id;
        memo.size = std::uint32_t(chain.size());
        memo.declared_count = 0;
        memo.has_placeholder = false;
        for (std::size_t i = 0; i < chain.size(); ++i) {
            memo.ids[i] = chain[i].id();
            if (const CellPtr* owner = table->find_slot(chain[i])) {
                memo.cells[memo.declared_count] = static_cast<const void*>(owner->get());
                memo.owners[memo.declared_count++] = static_cast<const void*>(owner);
                memo.has_placeholder |= !(*owner)->is_loaded();
            }
        }
        return &memo;
    }

    // Removes the entries matching `pred` and returns them.
    template <class Pred>
    static std::vector<const CellPtr*> take_matching(std::vector<const CellPtr*>& entries,
                                                     Pred& pred) {
        std::vector<const CellPtr*> taken;
        std::erase_if(entries, [&](const CellPtr* e) {
            if (!pred(**e))
                return false;
            taken.push_back(e);
            return true;
        });
        return taken;
    }

    // Publishes a table of `entries`, retires `retired` (and what the table drops: a key met
    // twice) and, once enough is retired, frees what no reader can reach, after unlocking.
    void publish(std::vector<const CellPtr*> entries, std::vector<const CellPtr*> retired,
                 std::unique_lock<std::mutex>& lock) {
        m_table = std::make_shared<const Table>(std::move(entries), &retired);
        m_generation.fetch_add(1, std::memory_order_release);
        if (!retired.empty()) {
            m_retired_count += retired.size();
            m_retired.push_back({detail::retire_epoch(), std::move(retired)});
        }
        if (m_retired_count < kReclaimAfter)
            return;
        auto garbage = take_unreachable();
        lock.unlock();
        for (const CellPtr* owner : garbage)
            delete owner;
    }

    // With m_mutex held: takes the retired batches no pinned reader can reach.
    std::vector<const CellPtr*> take_unreachable() {
        std::vector<const CellPtr*> garbage;
        if (m_retired.empty())
            return garbage;
        const std::uint64_t oldest = detail::oldest_pinned_epoch();
        while (!m_retired.empty() && m_retired.front().epoch < oldest) {
            auto& batch = m_retired.front();
            garbage.insert(garbage.end(), batch.cells.begin(), batch.cells.end());
            m_retired_count -= batch.cells.size();
            m_retired.pop_front();
        }
        return garbage;
    }

    std::shared_ptr<const Table> snapshot() const {
        std::lock_guard lock(m_mutex);
        return m_table;
    }

    // The calling thread's cached snapshot: one atomic load when nothing changed.
    const Table& current() const {
        auto& cache = detail::thread_table_cache();
        const auto gen = m_generation.load(std::memory_order_acquire);
        for (auto& c : cache.entries) {
            if (c.id == m_id) {
                if (c.generation != gen) {
                    std::lock_guard lock(m_mutex);
                    c.table = m_table;
                    c.generation = m_generation.load(std::memory_order_relaxed);
                }
                return *static_cast<const Table*>(c.table.get());
            }
        }
        auto& c = cache.entries[cache.next_victim++ % std::size(cache.entries)];
        std::lock_guard lock(m_mutex);
        c.id = m_id;
        c.table = m_table;
        c.generation = m_generation.load(std::memory_order_relaxed);
        return *static_cast<const Table*>(c.table.get());
    }

    std::string m_name;
    std::vector<std::string> m_fields;
    std::uint64_t m_id;
    mutable std::mutex m_mutex;
    // Cells retired together at one epoch, oldest first. Each cell is a heap CellPtr the
    // tables point at: the registry owns those in its current table and in m_retired.
    struct Retired {
        std::uint64_t epoch = 0;
        std::vector<const CellPtr*> cells;
    };
    static constexpr std::size_t kReclaimAfter = 1024; // retired cells before a reclaim pass
    std::deque<Retired> m_retired;
    std::size_t m_retired_count = 0;
    std::shared_ptr<const Table> m_table;
    std::atomic<std::uint64_t> m_generation{0};
};

} // namespace switchyard

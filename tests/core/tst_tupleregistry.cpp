// SPDX-License-Identifier: MIT
// The seed kernel registry: tuple-keyed registries with availability, exact lookup, resolve_first,
// manifest.
#include <switchyard/registry/manifestrows.h>
#include <switchyard/sdk/registries.h>

#include <QStandardPaths>
#include <QTest>

#include "support/childprocess.h"

#include <atomic>
#include <optional>
#include <stdexcept>
#include <thread>

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace switchyard;

namespace {

KernelCell cell(TupleKey key, std::function<bool()> available = {}, std::int64_t workspace = 0,
                std::string backend = "t") {
    KernelCell c;
    c.key = std::move(key);
    c.fn = [](const KernelArgs&) {};
    c.available = std::move(available);
    c.source = CellSource::Registered;
    c.backend = std::move(backend);
    c.meta = {{"workspace_bytes", workspace}};
    return c;
}

// Retired cells are freed only after a process-wide barrier (membarrier); a kernel or a
// sandbox without it keeps them (reclaim.cpp), so the tests that count frees skip there.
bool process_barrier_available() {
#if defined(__linux__) && defined(SYS_membarrier)
    const long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return supported > 0 &&
           (supported & (MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_PRIVATE_EXPEDITED)) != 0;
#else
    return false;
#endif
}

// Counts its live instances: a cell capturing one is freed exactly when the count drops.
struct Tracked {
    Tracked() { ++live; }
    Tracked(const Tracked&) { ++live; }
    ~Tracked() { --live; }
    static inline std::atomic<int> live{0};
};

} // namespace

class TestTupleRegistry : public QObject {
    Q_OBJECT
private slots:
    void arityIsChecked_data() {
        QTest::addColumn<QStringList>("parts");
        QTest::addColumn<bool>("ok");
        QTest::newRow("four") << QStringList{"gemm", "cpu", "generic", "reference"} << true;
        QTest::newRow("three") << QStringList{"gemm", "cpu", "generic"} << false;
        QTest::newRow("five") << QStringList{"gemm", "cpu", "generic", "reference", "x"} << false;
        QTest::newRow("empty") << QStringList{} << false;
    }
    void arityIsChecked() {
        QFETCH(QStringList, parts);
        QFETCH(bool, ok);
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        std::vector<std::string> p;
        for (const auto& s : parts)
            p.push_back(s.toStdString());
        TupleKey key(p);
        if (ok) {
            reg.put(cell(key));
            QVERIFY(reg.lookup(key));
        } else {
            try {
                reg.put(cell(key));
                QFAIL("put with a wrong arity must throw");
            } catch (const std::invalid_argument& e) {
                const QString msg = QString::fromUtf8(e.what());
                QVERIFY2(msg.contains("op, device, arch, variant"), qPrintable(msg));
                QVERIFY2(msg.contains("kernels"), qPrintable(msg));
            }
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, reg.lookup(key));
            QCOMPARE(reg.size(), std::size_t{0});
        }
    }

    void lookupIsExactAndIgnoresAvailability() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        reg.put(cell({"gemm", "cuda", "sm_90", "default"}, [] { return false; }));
        auto c = reg.lookup({"gemm", "cuda", "sm_90", "default"});
        QVERIFY(c);
        QVERIFY(!c->is_available());
        QVERIFY(!reg.lookup({"gemm", "cuda", "sm_80", "default"}));
        QVERIFY(!reg.lookup({"gemm", "cuda", "sm_90", "Default"}));
    }

    void resolveFirst_data() {
        // Each cell: key index -> availability (0 unavailable, 1 available, 2 predicate throws).
        QTest::addColumn<QList<int>>("declared"); // per rung: -1 not declared, 0/1/2 as above
        QTest::addColumn<int>("winner");          // rung index, -1 none
        QTest::newRow("first available wins") << QList<int>{1, 1, 1} << 0;
        QTest::newRow("skips undeclared") << QList<int>{-1, -1, 1} << 2;
        QTest::newRow("skips unavailable") << QList<int>{0, 1, 1} << 1;
        QTest::newRow("throwing predicate is unavailable") << QList<int>{2, -1, 1} << 2;
        QTest::newRow("nothing resolves") << QList<int>{0, -1, 2} << -1;
        QTest::newRow("empty registry") << QList<int>{-1, -1, -1} << -1;
    }
    void resolveFirst() {
        QFETCH(QList<int>, declared);
        QFETCH(int, winner);
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        const std::vector<TupleKey> chain = {{"gemm", "cuda", "sm_90", "default"},
                                             {"gemm", "cuda", "generic", "default"},
                                             {"gemm", "cpu", "generic", "reference"}};
        for (int i = 0; i < declared.size(); ++i) {
            const int d = declared[i];
            if (d < 0)
                continue;
            std::function<bool()> pred = d == 1   ? std::function<bool()>([] { return true; })
                                         : d == 0 ? std::function<bool()>([] { return false; })
                                                  : std::function<bool()>([]() -> bool {
                                                        throw std::runtime_error("probe failed");
                                                    });
            reg.put(cell(chain[static_cast<std::size_t>(i)], pred));
        }
        auto got = reg.resolve_first(chain);
        if (winner < 0) {
            QVERIFY(!got);
        } else {
            QVERIFY(got);
            QVERIFY(got->key == chain[static_cast<std::size_t>(winner)]);
        }
    }

    void putReplacesSameKey() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        reg.put(cell({"gemm", "cpu", "generic", "reference"}, {}, 1));
        reg.put(cell({"gemm", "cpu", "generic", "reference"}, {}, 2));
        QCOMPARE(reg.size(), std::size_t{1});
        QCOMPARE(reg.lookup({"gemm", "cpu", "generic", "reference"})
                     ->meta.integer_or("workspace_bytes", -1),
                 2);
    }

    void manifestListsEverythingSortedByStrings() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        // Inserted out of order; "sm_100" sorts before "sm_90" as a string, as in Python.
        reg.put(cell({"rms_norm", "cpu", "generic", "reference"}));
        reg.put(cell(
            {"gemm", "cuda", "sm_90", "default"}, [] { return false; }, 4096));
        reg.put(cell({"gemm", "cuda", "sm_100", "default"}, [] { return false; }));
        reg.put(cell({"gemm", "cpu", "x86-64-v3", "default"}));
        reg.put(
            cell({"flow_match_step", "opencl", "generic", "default"}, []() -> bool { throw 1; }));
        const auto rows = manifest_json(reg);
        QCOMPARE(rows.size(), std::size_t{5});
        QStringList order;
        for (const auto& r : rows)
            order << QString::fromStdString(r["op"].get<std::string>() + "/" +
                                            r["device"].get<std::string>() + "/" +
                                            r["arch"].get<std::string>());
        QCOMPARE(order,
                 (QStringList{"flow_match_step/opencl/generic", "gemm/cpu/x86-64-v3",
                              "gemm/cuda/sm_100", "gemm/cuda/sm_90", "rms_norm/cpu/generic"}));
        QCOMPARE(rows[0]["available"].get<bool>(), false);
        QCOMPARE(rows[1]["available"].get<bool>(), true);
        QCOMPARE(rows[3]["available"].get<bool>(), false);
        QCOMPARE(rows[3]["workspace_bytes"].get<int>(), 4096);
        for (const auto& r : rows)
            for (const char* f : {"op", "device", "arch", "variant", "available", "source",
                                  "workspace_bytes", "backend"})
                QVERIFY2(r.contains(f), f);
    }

    void manifestOrderMatchesPython() {
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty())
            QSKIP("python3 is not installed: cannot compare with the seed's sorted(..., "
                  "key=tuple(map(str, k)))");
        const std::vector<std::vector<std::string>> keys = {{"gemm", "cuda", "sm_90", "default"},
                                                            {"gemm", "cuda", "sm_100", "default"},
                                                            {"Gemm", "cpu", "generic", "x"},
                                                            {"gemm", "cpu", "generic", "reference"},
                                                            {"gemm", "cpu", "generic", "default"},
                                                            {"gemm_", "a", "b", "c"},
                                                            {"gem", "z", "z", "z"},
                                                            {"gemm", "cuda", "sm_9", "default"},
                                                            {"_x", "cpu", "generic", "reference"}};
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        QString literal = "[";
        for (const auto& k : keys) {
            reg.put(cell(TupleKey(k)));
            literal += QStringLiteral("('%1','%2','%3','%4'),")
                           .arg(QString::fromStdString(k[0]), QString::fromStdString(k[1]),
                                QString::fromStdString(k[2]), QString::fromStdString(k[3]));
        }
        literal += "]";
        const auto p =
            test::run_process(python,
                              {"-c", "import sys\nfor k in sorted(" + literal +
                                         ", key=lambda k: tuple(map(str,k))): print('/'.join(k))"},
                              {.timeout_ms = 20000});
        QVERIFY2(p.code == 0, p.err.constData());
        const QStringList expected = QString::fromUtf8(p.out).split('\n', Qt::SkipEmptyParts);
        QStringList got;
        for (const auto& m : reg.manifest())
            got << QString::fromStdString(m.cell->key[0] + "/" + m.cell->key[1] + "/" +
                                          m.cell->key[2] + "/" + m.cell->key[3]);
        QCOMPARE(got, expected);
    }

    void componentsHaveThreeFields() {
        ComponentRegistry reg("components", {"kind", "device", "variant"});
        ComponentCell c;
        c.key = {"vae", "cpu", "numpy"};
        c.fn = [](const Value&) { return std::shared_ptr<void>(); };
        reg.put(c);
        QVERIFY(reg.lookup({"vae", "cpu", "numpy"}));
        c.key = {"vae", "cpu", "generic", "numpy"};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, reg.put(c));
    }

    void replaceIfIsOneStep() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        reg.put(cell({"gemm", "cpu", "generic", "reference"}, {}, 0, "a"));
        reg.put(cell({"gemm", "cpu", "generic", "default"}, {}, 0, "b"));
        reg.replace_if([](const KernelCell& c) { return c.backend == "b"; },
                       {cell({"gemm", "cpu", "generic", "fast"}, {}, 0, "b")});
        QCOMPARE(reg.size(), std::size_t{2});
        QVERIFY(!reg.lookup({"gemm", "cpu", "generic", "default"}));
        QVERIFY(reg.lookup({"gemm", "cpu", "generic", "fast"}));
        QCOMPARE(reg.erase_if([](const KernelCell& c) { return c.backend == "a"; }),
                 std::size_t{1});
        QCOMPARE(reg.size(), std::size_t{1});
    }

    void declaredCellIsLoadedWhenReached() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        const TupleKey key{"gemm", "opencl", "generic", "default"};
        std::atomic<int> loads{0};
        KernelCell placeholder;
        placeholder.key = key;
        placeholder.backend = "lazy";
        placeholder.loader = [&] {
            ++loads;
            reg.put(cell(key, {}, 0, "lazy"));
        };
        reg.put(placeholder);
        QVERIFY(!reg.lookup(key)->is_loaded());
        auto got = reg.resolve_first({key, TupleKey{"gemm", "cpu", "generic", "reference"}});
        QVERIFY(got);
        QVERIFY(got->is_loaded());
        QCOMPARE(loads.load(), 1);
        QVERIFY(reg.resolve_first({key}));
        QCOMPARE(loads.load(), 1);
    }

    void failedLoaderFallsThrough() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        KernelCell placeholder;
        placeholder.key = {"gemm", "opencl", "generic", "default"};
        placeholder.loader = [] { throw std::runtime_error("broken"); };
        reg.put(placeholder);
        reg.put(cell({"gemm", "cpu", "generic", "reference"}));
        auto got = reg.resolve_first({TupleKey{"gemm", "opencl", "generic", "default"},
                                      TupleKey{"gemm", "cpu", "generic", "reference"}});
        QVERIFY(got);
        QCOMPARE(QString::fromStdString(got->key[1]), QStringLiteral("cpu"));
    }

    void preparedChainAgreesWithPlain() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        std::atomic<bool> gpu{false};
        const std::vector<TupleKey> keys = {{"gemm", "cuda", "sm_90", "default"},
                                            {"gemm", "cuda", "generic", "default"},
                                            {"gemm", "cpu", "generic", "reference"}};
        PreparedChain<KernelFn> prepared(keys);
        auto same = [&]() {
            auto a = reg.resolve_first(keys);
            auto b = reg.resolve_first(prepared);
            return a.get() == b.get();
        };
        QVERIFY(!reg.resolve_first(prepared));
        reg.put(cell(keys[2]));
        QVERIFY(same());
        QVERIFY(reg.resolve_first(prepared)->key == keys[2]);
        reg.put(cell(keys[0], [&] { return gpu.load(); }));
        QVERIFY(same());
        QVERIFY(reg.resolve_first(prepared)->key == keys[2]);
        gpu = true; // availability is re-checked on every call, not memoized
        QVERIFY(same());
        QVERIFY(reg.resolve_first(prepared)->key == keys[0]);
        reg.erase(keys[0]);
        QVERIFY(same());
        QVERIFY(reg.resolve_first(prepared)->key == keys[2]);
        KernelRegistry other("kernels", {"op", "device", "arch", "variant"});
        QVERIFY(!other.resolve_first(
            prepared)); // a chain prepared for one registry is redone for another
    }

    // CellRef's lifetime rule: the cell resolve_first() returns is retired when it is
    // replaced or erased, stays readable while the CellRef lives, and is freed once no
    // reference taken before it was retired is left; converting it to a CellPtr owns it
    // beyond that and beyond the registry.
    void retiredCellIsFreedOnceItsReadersLetGo() {
        if (!process_barrier_available())
            QSKIP("no membarrier here: retired cells are kept, by design (reclaim.cpp)");
        const TupleKey key{"gemm", "cpu", "generic", "reference"};
        const TupleKey other{"gemm", "cpu", "generic", "default"};
        auto freed_token = std::make_shared<int>(1); // captured by a cell only a CellRef sees
        auto kept_token = std::make_shared<int>(2);  // captured by a cell a CellPtr keeps
        KernelRegistry::CellPtr owned;
        {
            KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
            {
                KernelCell a = cell(key, {}, 7, "old");
                a.fn = [freed_token](const KernelArgs&) {};
                KernelCell b = cell(other, {}, 9, "kept");
                b.fn = [kept_token](const KernelArgs&) {};
                reg.put_all({a, b});
            }
            {
                const auto ref = reg.resolve_first({key});
                const auto kept = reg.resolve_first({other});
                QVERIFY(ref && kept);
                QCOMPARE(freed_token.use_count(), 2);

                reg.put(cell(key, {}, 8, "new")); // replaces the resolved cell
                QCOMPARE(QString::fromStdString(reg.resolve_first({key})->backend),
                         QStringLiteral("new"));
                reg.erase(key);
                reg.clear();
                QVERIFY(!reg.resolve_first({key}));
                QCOMPARE(reg.size(), std::size_t{0});
                QCOMPARE(reg.cells_held(), std::size_t{3}); // two retired by clear(), one by put()

                // Retired, not freed while the references live: they still read their cells.
                QCOMPARE(reg.reclaim(), std::size_t{0});
                QCOMPARE(freed_token.use_count(), 2);
                QVERIFY(ref->key == key);
                QCOMPARE(QString::fromStdString(ref->backend), QStringLiteral("old"));
                QCOMPARE(ref->meta.integer_or("workspace_bytes", -1), 7);
                QVERIFY(ref->is_loaded());
                owned = kept; // the implicit conversion shares ownership
                QCOMPARE(owned.get(), kept.get());
            }
            // The references are gone: the three retired cells are freed, except the one a
            // CellPtr owns.
            QCOMPARE(reg.reclaim(), std::size_t{3});
            QCOMPARE(reg.cells_held(), std::size_t{0});
            QCOMPARE(freed_token.use_count(), 1);
            QCOMPARE(kept_token.use_count(), 2);
        }
        QCOMPARE(QString::fromStdString(owned->backend), QStringLiteral("kept"));
        owned.reset();
        QCOMPARE(kept_token.use_count(), 1);
    }

    // A rescan's shape (every plugin's cells erased, then declared again), repeated: a
    // CellRef taken before the first stays readable through all of them, and once it is let
    // go the registry holds exactly the cells it declares (a destructor count says so).
    void rescansFreeRetiredCells() {
        if (!process_barrier_available())
            QSKIP("no membarrier here: retired cells are kept, by design (reclaim.cpp)");
        constexpr int kCells = 3000;
        auto batch = [](int round) {
            std::vector<KernelCell> cells;
            for (int i = 0; i < kCells; ++i) {
                auto c = cell({"op_" + std::to_string(i), "cpu", "generic", "p"}, {}, round,
                              "r" + std::to_string(round));
                c.fn = [t = Tracked()](const KernelArgs&) {};
                cells.push_back(std::move(c));
            }
            return cells;
        };
        {
            KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
            reg.put_all(batch(0));
            QCOMPARE(Tracked::live.load(), kCells);
            std::optional<KernelRegistry::Ref> early =
                reg.resolve_first({{"op_7", "cpu", "generic", "p"}});
            QVERIFY(*early);
            for (int round = 1; round <= 5; ++round) {
                reg.erase_if([](const KernelCell& c) { return c.key[1] == "cpu"; });
                reg.put_all(batch(round));
                QCOMPARE(QString::fromStdString((*early)->backend), QStringLiteral("r0"));
            }
            QCOMPARE(reg.resolve_first({{"op_7", "cpu", "generic", "p"}})->backend,
                     std::string("r5"));
            // Held back by the early reference: every round's cells are still there.
            QCOMPARE(Tracked::live.load(), 6 * kCells);
            QCOMPARE(reg.cells_held(), std::size_t(6 * kCells));
            early.reset();
            reg.reclaim();
            QCOMPARE(Tracked::live.load(), kCells);
            QCOMPARE(reg.cells_held(), std::size_t(kCells));
            // Without a reference held, mutation reclaims on its own (after enough retired).
            for (int round = 6; round <= 10; ++round)
                reg.replace_if([](const KernelCell&) { return true; }, batch(round));
            QVERIFY(Tracked::live.load() <= 2 * kCells);
        }
        QCOMPARE(Tracked::live.load(), 0);
    }

    // A CellRef moved or copied to another thread and let go there releases its pin there.
    void cellRefsCrossThreads() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        const TupleKey key{"gemm", "cpu", "generic", "reference"};
        auto token = std::make_shared<int>(0);
        KernelCell c = cell(key, {}, 1, "old");
        c.fn = [token](const KernelArgs&) {};
        reg.put(std::move(c));
        c = {};
        auto ref = reg.resolve_first({key});
        reg.put(cell(key, {}, 2, "new"));
        std::string seen_moved, seen_copied;
        std::thread([&, moved = std::move(ref)]() mutable {
            auto copy = moved; // a second pin, taken on this thread
            moved = {};
            QCOMPARE(reg.reclaim(), std::size_t{0}); // the copy still holds the old cell
            seen_copied = copy->backend;
            std::thread([&, again = std::move(copy)] { seen_moved = again->backend; }).join();
        }).join();
        QCOMPARE(QString::fromStdString(seen_copied), QStringLiteral("old"));
        QCOMPARE(QString::fromStdString(seen_moved), QStringLiteral("old"));
        QCOMPARE(reg.reclaim(), std::size_t{1});
        QCOMPARE(token.use_count(), 1);
    }

    // References held by readers stay readable while a writer replaces and erases the very
    // cells they resolved (every cell's backend name repeats its serial number).
    void resolvedCellsStayValidUnderConcurrentReplacement() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        const TupleKey key{"gemm", "cpu", "generic", "reference"};
        const std::vector<TupleKey> chain = {{"gemm", "cuda", "sm_90", "default"}, key};
        auto serial_cell = [&](int i) {
            auto c = cell(key, {}, i, "b" + std::to_string(i));
            c.fn = [name = std::string(64, char('a' + i % 26))](const KernelArgs&) {};
            return c;
        };
        reg.put(serial_cell(0));
        std::atomic<bool> stop{false};
        std::atomic<int> bad{0};
        std::atomic<long> held{0};
        std::vector<std::thread> readers;
        for (int t = 0; t < 4; ++t)
            readers.emplace_back([&] {
                std::vector<KernelRegistry::Ref> refs;
                while (!stop) {
                    auto ref = reg.resolve_first(chain);
                    if (ref)
                        refs.push_back(ref);
                    if (refs.size() == 256) {
                        for (const auto& r : refs)
                            if (r->backend !=
                                "b" + std::to_string(r->meta.integer_or("workspace_bytes", -1)))
                                ++bad;
                        held += long(refs.size());
                        refs.clear();
                    }
                }
            });
        // 3,000 replacements at least, and more (yielding) until a reader has checked a full
        // batch: on a busy machine the writer can finish before any reader ran.
        for (int i = 1; i <= 3000 || (held.load() == 0 && i <= 100000); ++i) {
            reg.put(serial_cell(i));
            if (i % 7 == 0)
                reg.erase(key);
            if (i > 3000)
                std::this_thread::yield();
        }
        stop = true;
        for (auto& t : readers)
            t.join();
        QCOMPARE(bad.load(), 0);
        QVERIFY(held.load() > 0);
    }

    // The calling thread's memo belongs to one registry: a new registry at the same address,
    // in the same generation, is never answered from a destroyed one's memo.
    void memoIsPerRegistryNotPerAddress() {
        const std::vector<TupleKey> chain = {{"gemm", "cuda", "sm_90", "default"},
                                             {"gemm", "cpu", "generic", "reference"}};
        std::optional<KernelRegistry> reg;
        const void* address = nullptr;
        for (int round = 0; round < 4; ++round) {
            reg.emplace("kernels", std::vector<std::string>{"op", "device", "arch", "variant"});
            if (round == 0)
                address = &*reg;
            QCOMPARE(static_cast<const void*>(&*reg), address);
            const auto winner = static_cast<std::size_t>(round % 2);
            reg->put(cell(chain[winner], {}, 0, "r" + std::to_string(round)));
            const auto got = reg->resolve_first(chain);
            QVERIFY(got);
            QVERIFY(got->key == chain[winner]);
            QCOMPARE(QString::fromStdString(got->backend), QString("r%1").arg(round));
            reg.reset();
        }
    }

    // The memo compares every rung: a chain that differs from a remembered one in a single
    // rung (same length, same ends) gets its own answer, for every length and position.
    void memoTellsChainsApartByEveryRung() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        for (int k = 0; k < 17; ++k)
            reg.put(
                cell({"gemm", "cuda", "hit", std::to_string(k)}, {}, 0, "d" + std::to_string(k)));
        for (int n = 1; n <= 17; ++n) { // 17: longer than the memo keeps
            std::vector<TupleKey> base;
            for (int i = 0; i < n; ++i)
                base.push_back({"gemm", "cuda", "miss", std::to_string(i)});
            for (int k = 0; k < n; ++k) {
                auto one = base;
                one[static_cast<std::size_t>(k)] = {"gemm", "cuda", "hit", std::to_string(k)};
                QVERIFY(!reg.resolve_first(base));
                const auto got = reg.resolve_first(one);
                QVERIFY2(got, qPrintable(QString("n=%1 k=%2").arg(n).arg(k)));
                QCOMPARE(QString::fromStdString(got->backend), QString("d%1").arg(k));
                QVERIFY(!reg.resolve_first(base));
            }
        }
    }

    void concurrentResolveAndPut() {
        KernelRegistry reg("kernels", {"op", "device", "arch", "variant"});
        reg.put(cell({"gemm", "cpu", "generic", "reference"}));
        const std::vector<TupleKey> chain = {{"gemm", "cuda", "sm_90", "default"},
                                             {"gemm", "cpu", "generic", "reference"}};
        std::atomic<bool> stop{false};
        std::atomic<int> misses{0};
        std::vector<std::thread> readers;
        for (int t = 0; t < 4; ++t)
            readers.emplace_back([&] {
                while (!stop)
                    if (!reg.resolve_first(chain))
                        ++misses;
            });
        for (int i = 0; i < 2000; ++i) {
            reg.put(cell({"gemm", "cuda", "sm_" + std::to_string(i % 50), "default"},
                         [] { return false; }));
            reg.erase({"gemm", "cuda", "sm_" + std::to_string((i + 25) % 50), "default"});
        }
        stop = true;
        for (auto& t : readers)
            t.join();
        QCOMPARE(misses.load(), 0); // the terminal rung never disappears
    }
};

QTEST_GUILESS_MAIN(TestTupleRegistry)
#include "tst_tupleregistry.moc"

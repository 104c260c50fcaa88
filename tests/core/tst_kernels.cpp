// SPDX-License-Identifier: MIT
// Every built-in CPU variant against the scalar reference, on odd sizes and edge values;
// the references against hand-computed values; the parity check against wrong kernels.
#include <QtTest>

#include "kernels/cpukernels.h"
#include "kernels/threadpool.h"

#include <switchyard/kernels/cpudevice.h>
#include <switchyard/kernels/reference.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/parity.h>
#include <switchyard/profiling/workload.h>

#include <cpuid.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

using namespace switchyard;

Q_DECLARE_METATYPE(switchyard::Dims)
Q_DECLARE_METATYPE(switchyard::InputPattern)

namespace {

const std::vector<KernelCell>& cpu_cells() {
    static CellRegistrar r("cpu", CellSource::Builtin);
    static bool done = [] {
        register_cpu_cells(r);
        return true;
    }();
    (void)done;
    return r.pending_kernels();
}

std::vector<Dims> odd_sizes(std::string_view op) {
    if (op == kFlowMatchStep)
        return {{1, 0, 0}, {7, 0, 0}, {1023, 0, 0}, {4099, 0, 0}, {(1 << 20) + 3, 0, 0}};
    if (op == kGemm)
        // M x N x K. 200x130x600: several k-blocks (KC 256 and 512), edge tiles on both
        // sides; 2100x2049x5: two column blocks (NC = 2048) in the row-split threaded path;
        // 33, 100, 257 cubes and the non-square ones: the fringes of the 6x16 (AVX2) and
        // 12x32 (AVX-512) tiles and of the row blocks (MC 96 and 336), k just past a block.
        return {{1, 1, 1},       {7, 7, 7},       {13, 17, 19},   {97, 31, 257},   {200, 130, 600},
                {5, 2051, 3},    {1023, 7, 9},    {7, 1023, 300}, {2100, 2049, 5}, {33, 33, 33},
                {100, 100, 100}, {257, 257, 257}, {1, 100, 7},    {100, 1, 33},    {29, 64, 513},
                {337, 70, 20},   {15, 33, 769}};
    // From 1M elements the SIMD rms_norm and flow_sde_step stream their output: 256x4096
    // (every row aligned) and 257x4099 (most rows not); 300x3500 (every fourth row aligned,
    // a tail of 12 floats). rms_norm sums the next row while it streams a row out, 2W
    // floats of each at a time: 1100x1003 (rows 11 floats past a
    // whole number of 4W steps, outputs at every alignment), 60000x20 (rows shorter than
    // one 4W step: no interleaved stores) and 350000x3 (shorter than a register: plain).
    // Where every output row is aligned it does so in two lanes (rows [0, B/2) beside
    // [B/2, B)): 256x4096, 257x4096 (an odd row last, alone), 8193x144 (rows of 2.25
    // 4W steps at 512 bits: a scaled tail after the interleaved stores of each lane).
    return {{1, 1, 0},      {1, 7, 0},      {3, 1023, 0},   {5, 4099, 0},   {67, 33, 0},
            {256, 4096, 0}, {257, 4096, 0}, {257, 4099, 0}, {300, 3500, 0}, {1100, 1003, 0},
            {8193, 144, 0}, {60000, 20, 0}, {350000, 3, 0}};
}

#if defined(__x86_64__)
unsigned xinuse() {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1u));
    return lo;
}

__attribute__((target("avx"))) unsigned xinuse_after_vzeroupper() {
    __builtin_ia32_vzeroupper();
    return xinuse();
}
#endif

constexpr unsigned kUpperHalves = (1u << 2) | (1u << 6); // XINUSE: AVX, ZMM_Hi256

// Whether this thread's vector registers have their upper halves in use (XINUSE, XGETBV with
// ECX = 1: bit 2, the AVX state, and bit 6, ZMM_Hi256), which makes the SSE code run after a
// kernel slow; nullopt where the CPU cannot say: no XGETBV with ECX = 1, no AVX, or a CPU
// without the init optimization, whose XINUSE keeps those bits set even after vzeroupper.
// Read it right after the kernel returns.
std::optional<bool> upper_halves_in_use() {
#if defined(__x86_64__)
    static const bool tracked = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)) || !(c & (1u << 28)))
            return false; // OSXSAVE, AVX
        if (!__get_cpuid_count(0xD, 1, &a, &b, &c, &d) || !(a & (1u << 2)))
            return false; // XGETBV with ECX = 1
        return (xinuse_after_vzeroupper() & kUpperHalves) == 0;
    }();
    if (!tracked)
        return std::nullopt;
    return (xinuse() & kUpperHalves) != 0;
#else
    return std::nullopt;
#endif
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT

private slots:
    // A paired A/B run places each pair's CPU buffers at drawn offsets: every buffer 64-byte
    // aligned at a 64-byte step into its page, the same seed giving the same offsets (both
    // sides of a pair), the offsets spread over the page, each buffer usable to its end and
    // released (ASan checks both), small and mapped (4 MiB on) alike; seed 0 turns it off.
    void placementIsDrawnFromTheSeed() {
        const auto device = make_cpu_device();
        const auto offsets = [&](std::uint64_t seed, std::size_t bytes) {
            device->vary_placement(seed);
            std::vector<std::size_t> got;
            for (int i = 0; i < 32; ++i) {
                auto* p = static_cast<unsigned char*>(device->allocate(bytes));
                const auto addr = reinterpret_cast<std::uintptr_t>(p);
                got.push_back(addr % 4096);
                std::memset(p, 0x5a, bytes); // all of it is the buffer's
                device->release(p);
            }
            return got;
        };
        for (const std::size_t bytes : {std::size_t(4), std::size_t(40000), std::size_t(5) << 20}) {
            const auto first = offsets(42, bytes);
            QCOMPARE(offsets(42, bytes), first);
            QVERIFY(offsets(43, bytes) != first);
            std::set<std::size_t> distinct;
            for (const auto off : first) {
                QCOMPARE(off % 64, std::size_t(0));
                distinct.insert(off);
            }
            QVERIFY2(distinct.size() >= 16, QByteArray::number(qulonglong(distinct.size())));
        }
        // Off: host_allocate's own buffers (64-byte aligned), released as such.
        device->vary_placement(0);
        void* p = device->allocate(100);
        QCOMPARE(reinterpret_cast<std::uintptr_t>(p) % 64, std::uintptr_t(0));
        device->release(p);
        device->release(nullptr);
    }

    // Both sides of a paired A/B run cut their buffers from one memory file: given the same
    // seed and sizes, two devices (two workers; here two devices of one process, each with
    // its own descriptor of the file) get the very same pages, so what one writes the other
    // reads; another seed starts elsewhere in the file; offsets stay drawn as without it; a
    // buffer past the first mapping (64 MiB) grows the file for both.
    void sharedFileGivesBothSidesTheSamePages() {
        const int fd = memfd_create("tst-kernels-shared", MFD_CLOEXEC);
        QVERIFY(fd >= 0);
        const int fd2 = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        QVERIFY(fd2 >= 0);
        {
            const auto a = make_cpu_device();
            const auto b = make_cpu_device();
            a->place_in_shared_file(fd);
            b->place_in_shared_file(fd2);
            QVERIFY_THROWS_EXCEPTION(std::logic_error, a->place_in_shared_file(fd));
            const std::vector<std::size_t> sizes = {4096 * 3 + 100, 40000, std::size_t(70) << 20};
            const auto cut = [&](CpuDevice& d, std::uint64_t seed) {
                d.vary_placement(seed);
                std::vector<unsigned char*> got;
                for (const auto bytes : sizes)
                    got.push_back(static_cast<unsigned char*>(d.allocate(bytes)));
                return got;
            };
            const auto pa = cut(*a, 77);
            const auto pb = cut(*b, 77);
            for (std::size_t i = 0; i < sizes.size(); ++i) {
                QVERIFY(pa[i] != pb[i]); // two mappings ...
                QCOMPARE(reinterpret_cast<std::uintptr_t>(pa[i]) % 4096,
                         reinterpret_cast<std::uintptr_t>(pb[i]) % 4096);
                std::memset(pa[i], int(0x11 * (i + 1)), sizes[i]);
                QCOMPARE(int(pb[i][0]), int(0x11 * (i + 1))); // ... of the same pages
                QCOMPARE(int(pb[i][sizes[i] - 1]), int(0x11 * (i + 1)));
            }
            struct stat st = {};
            QVERIFY(fstat(fd, &st) == 0);
            QVERIFY(std::size_t(st.st_size) >= (std::size_t(70) << 20));
            for (auto* p : pa)
                a->release(p);
            for (auto* p : pb)
                b->release(p);
            // Another seed: another start in the file (pages), the other side alike.
            const auto qa = cut(*a, 78);
            const auto qb = cut(*b, 78);
            QVERIFY(qa[0] - pa[0] != 0);
            QCOMPARE(qb[0] - pb[0], qa[0] - pa[0]);
            for (auto* p : qa)
                a->release(p);
            for (auto* p : qb)
                b->release(p);
        }
        ::close(fd);
        ::close(fd2);
    }

    // The copy probe writes a = 0.5 b over exactly [0, n), at every alignment of a and every
    // tail, with each form this CPU runs (plain and non-temporal stores, one lane and two): a float
    // skipped or written past would make the ceiling count bytes it did not move.
    void copyProbeWritesEveryFloatOnce() {
        std::vector<int> forms{0, 10};
        if (cpu_supports_x86_64_v3())
            forms.insert(forms.end(), {3, 13, 103, 113});
        if (cpu_supports_x86_64_v4())
            forms.insert(forms.end(), {4, 14, 104, 114});
        auto* b = static_cast<float*>(host_allocate(sizeof(float) * 8192));
        auto* a = static_cast<float*>(host_allocate(sizeof(float) * 8192));
        for (std::int64_t i = 0; i < 8192; ++i)
            b[i] = float(1 + i % 11);
        for (int form : forms)
            for (std::int64_t off : {0, 1, 3, 8, 15})
                for (std::int64_t n : {0, 1, 5, 63, 64, 65, 200, 1023, 4099}) {
                    std::fill(a, a + 8192, -7.0f);
                    cpu_copy_probe(form, n, a + off, b + off);
                    for (std::int64_t i = 0; i < 8192; ++i) {
                        const bool inside = i >= off && i < off + n;
                        const float want = inside ? 0.5f * b[i] : -7.0f;
                        if (a[i] != want) {
                            host_release(a);
                            host_release(b);
                            QFAIL(qPrintable(QStringLiteral("form %1, offset %2, n %3: a[%4] = "
                                                            "%5, want %6")
                                                 .arg(form)
                                                 .arg(off)
                                                 .arg(n)
                                                 .arg(i)
                                                 .arg(double(a[i]))
                                                 .arg(double(want))));
                        }
                    }
                }
        host_release(a);
        host_release(b);
    }

    // The CPU device's buffers: 64-byte aligned, and 2 MiB aligned (huge-page candidates)
    // from 4 MiB on; every byte asked for is usable.
    void hostBuffersAreAligned() {
        for (std::size_t bytes : {std::size_t(1), std::size_t(100), std::size_t(3) << 20,
                                  std::size_t(4) << 20, (std::size_t(9) << 20) + 3}) {
            auto* p = static_cast<unsigned char*>(host_allocate(bytes));
            QVERIFY(p);
            const auto addr = reinterpret_cast<std::uintptr_t>(p);
            QCOMPARE(addr % 64, std::uintptr_t(0));
            if (bytes >= (std::size_t(4) << 20))
                QCOMPARE(addr % (std::uintptr_t(2) << 20), std::uintptr_t(0));
            std::memset(p, 7, bytes);
            QCOMPARE(int(p[0]), 7);
            QCOMPARE(int(p[bytes - 1]), 7);
            host_release(p);
        }
        host_release(nullptr);
    }

    // The read probe reads every float of its set exactly once, whatever the set's size:
    // its four skewed streams, the gaps between them and the tail (a float read twice or
    // skipped would make the ceiling count bytes it did not move). Small integers, so every
    // sum is exact in float.
    void readProbeReadsEveryFloatOnce() {
        std::vector<int> isas{0};
        if (cpu_supports_x86_64_v3())
            isas.push_back(3);
        if (cpu_supports_x86_64_v4())
            isas.push_back(4);
        std::vector<std::int64_t> sizes;
        for (std::int64_t n = 0; n <= 1200; ++n)
            sizes.push_back(n);
        for (std::int64_t n : {4095, 4096, 6144, 32768, 32769, 131072 + 17})
            sizes.push_back(n);
        auto* x = static_cast<float*>(host_allocate(sizeof(float) * 131072 + 4096));
        for (std::int64_t i = 0; i < 131072 + 1024; ++i)
            x[i] = float(1 + i % 7);
        for (int isa : isas)
            for (std::int64_t n : sizes) {
                double want = 0;
                for (std::int64_t i = 0; i < n; ++i)
                    want += double(x[i]);
                const double got = cpu_read_probe(isa, n, x);
                if (got != want) {
                    host_release(x);
                    QFAIL(qPrintable(
                        QStringLiteral("isa %1, n %2: the probe summed %3, the set holds %4")
                            .arg(isa)
                            .arg(n)
                            .arg(got, 0, 'f', 0)
                            .arg(want, 0, 'f', 0)));
                }
            }
        host_release(x);
    }

    void everyCellStatesWorkspace() {
        QVERIFY(!cpu_cells().empty());
        for (const auto& op : ops()) {
            bool has_reference = false;
            for (const auto& c : cpu_cells()) {
                QVERIFY2(c.meta.contains("workspace_bytes") &&
                             c.meta.find("workspace_bytes")->is_integer(),
                         c.key.to_string().c_str());
                QCOMPARE(c.key[1], std::string("cpu"));
                if (c.key[0] == op.name && c.key[2] == "generic" && c.key[3] == "reference")
                    has_reference = true;
            }
            QVERIFY2(has_reference, std::string(op.name).c_str());
        }
    }

    void v3CellsFollowTheRuntimeCheck() {
        for (const auto& c : cpu_cells())
            if (c.key[2] == "x86-64-v3")
                QCOMPARE(c.is_available(), cpu_supports_x86_64_v3());
    }

    // Every op has x86-64-v4 default and threaded cells, available exactly where the CPU
    // runs x86-64-v4; a resolution for this CPU stops at the first rung it can run.
    void v4CellsFollowTheRuntimeCheck() {
        for (const auto& op : ops()) {
            std::set<std::string> variants;
            for (const auto& c : cpu_cells())
                if (c.key[0] == op.name && c.key[2] == "x86-64-v4") {
                    variants.insert(c.key[3]);
                    QCOMPARE(c.is_available(), cpu_supports_x86_64_v4());
                    QCOMPARE(c.meta.text_or("isa", std::string()),
                             std::string("avx512f+bw+vl+fma"));
                }
            QCOMPARE(variants, (std::set<std::string>{"default", "threaded"}));
        }
        if (!cpu_supports_x86_64_v4()) {
            // The v4 entry points refuse to run rather than die on an illegal instruction.
            for (const auto& c : cpu_cells())
                if (c.key[2] == "x86-64-v4") {
                    const auto& op = *find_op(c.key[0]);
                    const Dims d = op.rank() == 1     ? Dims{64, 0, 0}
                                   : op.name == kGemm ? Dims{8, 8, 8}
                                                      : Dims{2, 64, 0};
                    Workload w(op, d, 1);
                    auto out = w.make_outputs();
                    QVERIFY_THROWS_EXCEPTION(std::runtime_error, c.fn(w.args(out)));
                }
        }
    }

    void variantMatchesReference_data() {
        QTest::addColumn<int>("cell");
        QTest::addColumn<Dims>("dims");
        QTest::addColumn<InputPattern>("pattern");
        const auto& cells = cpu_cells();
        for (int i = 0; i < int(cells.size()); ++i) {
            const auto& key = cells[std::size_t(i)].key;
            const auto* op = find_op(key[0]);
            for (const auto& d : odd_sizes(key[0]))
                for (auto p : {InputPattern::Random, InputPattern::Zeros, InputPattern::Negatives,
                               InputPattern::Large}) {
                    // Big sizes once, with random inputs, to keep the suite fast.
                    if (p != InputPattern::Random && op->bytes(d) > 4e6)
                        continue;
                    const auto name = key[2] + "/" + key[3] + " " + std::string(key[0]) + " " +
                                      dims_to_string(*op, d) + " " + std::string(to_string(p));
                    QTest::newRow(name.c_str()) << i << d << p;
                }
        }
    }
    void variantMatchesReference() {
        QFETCH(int, cell);
        QFETCH(Dims, dims);
        QFETCH(InputPattern, pattern);
        const auto& c = cpu_cells()[std::size_t(cell)];
        if (c.key[2] == "x86-64-v4" && !c.is_available())
            QSKIP("this CPU has no AVX-512F (x86-64-v4 variant; it runs where the CPU has it)");
        if (!c.is_available())
            QSKIP("this CPU cannot run the variant (runtime ISA check)");
        const auto& op = *find_op(c.key[0]);
        Workload w(op, dims, 1234, pattern);
        auto out = w.make_outputs();
        auto args = w.args(out);
        (void)upper_halves_in_use(); // its first call finds out whether the CPU can tell
        c.fn(args);
        const auto dirty = upper_halves_in_use();
        const auto parity = check_parity(op, dims, out, w.reference());
        QVERIFY2(parity.pass, parity.first_failure.c_str());
        // Our cells return with the upper halves of the vector registers clean (vzeroupper):
        // the rms_norm AVX-512 entry once returned through a tail call without it, and the
        // reference rows after it in a run took 3.5x as long. OpenBLAS's kernels are its own
        // per CPU (the profiler clears the state before each row whatever a cell leaves).
        QVERIFY2(c.key[3] == "openblas" || !dirty.value_or(false),
                 "the cell returned with the vector registers' upper halves in use (no "
                 "vzeroupper): the SSE code after it on this thread runs slowly");
    }

    // The gemm cells with a declared workspace pack into it (the profiler's canaries guard
    // it): given exactly the declared bytes, 64-byte aligned, they stay inside them and
    // still match the reference (threaded cells included: one slice per thread).
    void gemmStaysInItsWorkspace_data() {
        QTest::addColumn<int>("cell");
        QTest::addColumn<Dims>("dims");
        const auto& cells = cpu_cells();
        for (int i = 0; i < int(cells.size()); ++i) {
            const auto& c = cells[std::size_t(i)];
            if (c.key[0] != kGemm || c.meta.integer_or("workspace_bytes", 0) == 0)
                continue;
            for (const Dims& d : {Dims{300, 257, 401}, Dims{5, 2051, 3}, Dims{2100, 70, 33}}) {
                const auto name =
                    c.key[2] + "/" + c.key[3] + " " + dims_to_string(*find_op(kGemm), d);
                QTest::newRow(name.c_str()) << i << d;
            }
        }
    }
    void gemmStaysInItsWorkspace() {
        QFETCH(int, cell);
        QFETCH(Dims, dims);
        const auto& c = cpu_cells()[std::size_t(cell)];
        if (!c.is_available())
            QSKIP("this CPU cannot run the variant (runtime ISA check)");
        const auto bytes = std::size_t(c.meta.integer_or("workspace_bytes", 0));
        constexpr std::size_t guard = 256;
        constexpr unsigned char canary = 0xa5;
        std::vector<unsigned char> buf(bytes + 2 * guard + 64, canary);
        auto base = reinterpret_cast<std::uintptr_t>(buf.data()) + guard;
        base = (base + 63) / 64 * 64;
        auto* ws = reinterpret_cast<unsigned char*>(base);
        const auto& op = *find_op(kGemm);
        Workload w(op, dims, 99);
        auto out = w.make_outputs();
        KernelArgs args = w.args(out);
        args.workspace = ws;
        args.workspace_bytes = bytes;
        c.fn(args);
        const auto parity = check_parity(op, dims, out, w.reference());
        QVERIFY2(parity.pass, parity.first_failure.c_str());
        for (const unsigned char* p = buf.data(); p < ws; ++p)
            QCOMPARE(int(*p), int(canary));
        for (const unsigned char* p = ws + bytes; p < buf.data() + buf.size(); ++p)
            QCOMPARE(int(*p), int(canary));
    }

    // flow_sde_step at sigma == 1 divides by (1 - sigma_max), not by zero.
    void sdeSigmaOneUsesSigmaMax_data() {
        QTest::addColumn<int>("cell");
        const auto& cells = cpu_cells();
        for (int i = 0; i < int(cells.size()); ++i)
            if (cells[std::size_t(i)].key[0] == kFlowSdeStep)
                QTest::newRow(
                    (cells[std::size_t(i)].key[2] + "/" + cells[std::size_t(i)].key[3]).c_str())
                    << i;
    }
    void sdeSigmaOneUsesSigmaMax() {
        QFETCH(int, cell);
        const auto& c = cpu_cells()[std::size_t(cell)];
        if (c.key[2] == "x86-64-v4" && !c.is_available())
            QSKIP("this CPU has no AVX-512F (x86-64-v4 variant; it runs where the CPU has it)");
        if (!c.is_available())
            QSKIP("this CPU cannot run the variant (runtime ISA check)");
        const auto& op = *find_op(kFlowSdeStep);
        const Dims dims{3, 1029, 0};
        Workload w(op, dims, 99);
        w.scalars = {1.0, 0.95, 0.98, 0.7};
        auto out = w.make_outputs();
        c.fn(w.args(out));
        for (float lp : w.reference()[1])
            QVERIFY(std::isfinite(lp));
        const auto parity = check_parity(op, dims, out, w.reference());
        QVERIFY2(parity.pass, parity.first_failure.c_str());
    }

    // rms_norm scales a row backwards when y sits just past x modulo 4 KiB (4K aliasing):
    // every cell gives the reference's numbers at every such placement, tails included.
    void rmsNormAtEveryPlacement() {
        const std::int64_t b = 5, d = 1000; // d is no multiple of the vector width
        std::vector<float> w(static_cast<std::size_t>(d)), want(static_cast<std::size_t>(b * d));
        // One 4 KiB-aligned arena: x at its start, y at 4 KiB + offset.
        std::vector<float> arena(std::size_t(4096 + 2 * b * d + 2048));
        auto* base = reinterpret_cast<float*>(
            (reinterpret_cast<std::uintptr_t>(arena.data()) + 4095) & ~std::uintptr_t(4095));
        float* x = base;
        for (std::int64_t i = 0; i < b * d; ++i)
            x[i] = 0.5f + float((i * 37) % 101) / 64.0f;
        for (std::int64_t i = 0; i < d; ++i)
            w[std::size_t(i)] = 1.0f + float(i % 7) / 8.0f;
        reference::rms_norm(b, d, x, w.data(), 1e-6, want.data());
        for (const auto& cell : cpu_cells()) {
            if (cell.key[0] != kRmsNorm || !cell.is_available())
                continue;
            for (std::int64_t offset : {0, 4, 16, 64, 200, 1020}) { // floats past x mod 4 KiB
                float* y = base + (((b * d + 1023) / 1024) * 1024) + offset;
                std::fill(y, y + b * d, -1.0f);
                KernelArgs args;
                args.dims = {b, d, 0};
                args.in[0] = x;
                args.in[1] = w.data();
                args.out[0] = y;
                args.scalars[0] = 1e-6;
                cell.fn(args);
                for (std::int64_t i = 0; i < b * d; ++i)
                    if (std::fabs(y[i] - want[std::size_t(i)]) >
                        1e-5f * std::fabs(want[std::size_t(i)]) + 1e-6f)
                        QFAIL(qPrintable(QStringLiteral("%1 offset %2: y[%3] = %4, want %5")
                                             .arg(QString::fromStdString(cell.key.to_string()))
                                             .arg(offset)
                                             .arg(i)
                                             .arg(double(y[i]))
                                             .arg(double(want[std::size_t(i)]))));
            }
        }
    }

    // From memory, with every output row aligned (the profiler's buffers: 64-byte aligned,
    // d a multiple of the vector width), rms_norm runs two lanes of rows side by side; each
    // row is the reference's, in the lane's last row, an odd B's row left alone, and rows
    // whose float sums overflow (1e30) or are all zero, in either lane.
    void rmsNormStreamsAlignedRowsInTwoLanes() {
        const Dims sizes[] = {
            {256, 4096, 0}, {257, 4096, 0}, {8193, 144, 0}, {2, 1 << 20, 0}, {3, 1 << 19, 0}};
        for (const auto& dims : sizes) {
            const std::int64_t b = dims[0], d = dims[1];
            const auto n = std::size_t(b * d);
            auto* x = static_cast<float*>(host_allocate(n * sizeof(float)));
            auto* y = static_cast<float*>(host_allocate(n * sizeof(float)));
            std::vector<float> w(static_cast<std::size_t>(d)), want(n);
            for (std::size_t i = 0; i < n; ++i)
                x[i] = float(int((i * 2654435761u) >> 20) % 2001 - 1000) / 256.0f;
            for (std::int64_t i = 0; i < d; ++i)
                w[std::size_t(i)] = 0.5f + float(i % 9) / 8.0f;
            // Odd rows out in each lane: 1e30 (the float sum overflows: summed in double) and
            // zeros, at the start of lane B and in lane A's second row.
            for (const std::int64_t r : {std::int64_t(1), b / 2}) {
                if (r >= b)
                    continue;
                for (std::int64_t i = 0; i < d; ++i)
                    x[r * d + i] = r == 1 ? 0.0f : 1e30f * float(1 + i % 3);
            }
            reference::rms_norm(b, d, x, w.data(), 1e-6, want.data());
            for (const auto& cell : cpu_cells()) {
                if (cell.key[0] != kRmsNorm || !cell.is_available())
                    continue;
                std::fill(y, y + n, -1.0f);
                KernelArgs args;
                args.dims = dims;
                args.in[0] = x;
                args.in[1] = w.data();
                args.out[0] = y;
                args.scalars[0] = 1e-6;
                cell.fn(args);
                for (std::size_t i = 0; i < n; ++i)
                    if (!(std::fabs(y[i] - want[i]) <= 1e-5f * std::fabs(want[i]) + 1e-6f)) {
                        const auto msg = QStringLiteral("%1 %2x%3: y[%4] (row %5) = %6, want %7")
                                             .arg(QString::fromStdString(cell.key.to_string()))
                                             .arg(b)
                                             .arg(d)
                                             .arg(i)
                                             .arg(std::int64_t(i) / d)
                                             .arg(double(y[i]))
                                             .arg(double(want[i]));
                        host_release(x);
                        host_release(y);
                        QFAIL(qPrintable(msg));
                    }
            }
            host_release(x);
            host_release(y);
        }
    }

    // flow_match_step too (out just past x, just past v, just before either, in place).
    void flowMatchAtEveryPlacement() {
        const std::int64_t n = 1003;
        std::vector<float> arena(std::size_t(4 * 4096 + 3 * 2048));
        auto* base = reinterpret_cast<float*>(
            (reinterpret_cast<std::uintptr_t>(arena.data()) + 4095) & ~std::uintptr_t(4095));
        float* x = base;
        float* v = base + 2048 + 16; // v 64 bytes past x modulo 4 KiB
        for (std::int64_t i = 0; i < n; ++i) {
            x[i] = float(i % 13) / 4.0f;
            v[i] = 1.0f - float(i % 5);
        }
        std::vector<float> want(static_cast<std::size_t>(n));
        reference::flow_match_step(n, x, v, -0.25, want.data());
        for (const auto& cell : cpu_cells()) {
            if (cell.key[0] != kFlowMatchStep || !cell.is_available())
                continue;
            for (std::int64_t offset : {0, 4, 16, 32, 200, 1020}) { // floats past x mod 4 KiB
                float* out = base + 2 * 4096 + offset;
                std::fill(out, out + n, -1.0f);
                KernelArgs args;
                args.dims = {n, 0, 0};
                args.in[0] = x;
                args.in[1] = v;
                args.out[0] = out;
                args.scalars[0] = -0.25;
                cell.fn(args);
                for (std::int64_t i = 0; i < n; ++i)
                    if (std::fabs(out[i] - want[std::size_t(i)]) > 1e-6f)
                        QFAIL(qPrintable(QStringLiteral("%1 offset %2: out[%3] = %4, want %5")
                                             .arg(QString::fromStdString(cell.key.to_string()))
                                             .arg(offset)
                                             .arg(i)
                                             .arg(double(out[i]))
                                             .arg(double(want[std::size_t(i)]))));
            }
        }
    }

    // flow_sde_step's rows too (prev just past x modulo 4 KiB, and not).
    void flowSdeAtEveryPlacement() {
        const std::int64_t b = 3, d = 1001;
        std::vector<float> arena(std::size_t(10 * 4096));
        auto* base = reinterpret_cast<float*>(
            (reinterpret_cast<std::uintptr_t>(arena.data()) + 4095) & ~std::uintptr_t(4095));
        float* x = base;
        float* v = base + 4096 + 40;
        float* noise = base + 2 * 4096 + 8;
        for (std::int64_t i = 0; i < b * d; ++i) {
            x[i] = float(i % 11) / 8.0f;
            v[i] = 0.5f - float(i % 7) / 4.0f;
            noise[i] = float((i * 5) % 13) / 6.0f - 1.0f;
        }
        std::vector<float> want(static_cast<std::size_t>(b * d)), want_lp(3), lp(3);
        reference::flow_sde_step(b, d, x, v, noise, 0.7, 0.6, 0.98, 0.7, want.data(),
                                 want_lp.data());
        for (const auto& cell : cpu_cells()) {
            if (cell.key[0] != kFlowSdeStep || !cell.is_available())
                continue;
            for (std::int64_t offset : {0, 4, 16, 64, 1020}) { // floats past x mod 4 KiB
                float* prev = base + 4 * 4096 + offset;
                std::fill(prev, prev + b * d, -1.0f);
                KernelArgs args;
                args.dims = {b, d, 0};
                args.in = {x, v, noise};
                args.out[0] = prev;
                args.out[1] = lp.data();
                args.scalars = {0.7, 0.6, 0.98, 0.7};
                cell.fn(args);
                const auto name = QString::fromStdString(cell.key.to_string());
                for (std::int64_t i = 0; i < b * d; ++i)
                    if (std::fabs(prev[i] - want[std::size_t(i)]) > 1e-5f)
                        QFAIL(qPrintable(QStringLiteral("%1 offset %2: prev[%3] = %4, want %5")
                                             .arg(name)
                                             .arg(offset)
                                             .arg(i)
                                             .arg(double(prev[i]))
                                             .arg(double(want[std::size_t(i)]))));
                for (int r = 0; r < 3; ++r)
                    QVERIFY2(std::fabs(lp[std::size_t(r)] - want_lp[std::size_t(r)]) <=
                                 1e-5f * std::fabs(want_lp[std::size_t(r)]) + 1e-6f,
                             qPrintable(name));
            }
        }
    }

    void referenceHandValues() {
        // flow_match_step
        const float x[3] = {1.0f, -2.0f, 0.5f}, v[3] = {4.0f, 8.0f, -1.0f};
        float out[3];
        reference::flow_match_step(3, x, v, -0.25, out);
        QCOMPARE(out[0], 0.0f);
        QCOMPARE(out[1], -4.0f);
        QCOMPARE(out[2], 0.75f);
        // rms_norm: x = [3, 4], mean(x^2) = 12.5
        const float rx[2] = {3.0f, 4.0f}, rw[2] = {1.0f, 2.0f};
        float ry[2];
        reference::rms_norm(1, 2, rx, rw, 0.0, ry);
        QCOMPARE(ry[0], float(3.0 / std::sqrt(12.5)));
        QCOMPARE(ry[1], float(8.0 / std::sqrt(12.5)));
        // gemm: [[1,2],[3,4]] * [[5,6],[7,8]] = [[19,22],[43,50]]; alpha 2, beta 0.5, C = 1
        const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
        float cm[4] = {1, 1, 1, 1};
        reference::gemm(2, 2, 2, a, b, 2.0, 0.5, cm);
        QCOMPARE(cm[0], 38.5f);
        QCOMPARE(cm[1], 44.5f);
        QCOMPARE(cm[2], 86.5f);
        QCOMPARE(cm[3], 100.5f);
        // beta == 0 never reads C (NaN there stays out of the result)
        float cn[4] = {NAN, NAN, NAN, NAN};
        reference::gemm(2, 2, 2, a, b, 1.0, 0.0, cn);
        QCOMPARE(cn[3], 50.0f);
        // flow_sde_step: values from docs/kernels.md's formula evaluated in Python
        const float sx = 0.5f, sv = -0.25f, sn = 1.0f;
        float prev, lp;
        reference::flow_sde_step(1, 1, &sx, &sv, &sn, 0.7, 0.6, 0.98, 0.7, &prev, &lp);
        QVERIFY(std::fabs(prev - 0.8284237907444202) < 1e-6);
        QVERIFY(std::fabs(lp - -0.334619972962519) < 1e-6);
        reference::flow_sde_step(1, 1, &sx, &sv, &sn, 1.0, 0.95, 0.98, 0.7, &prev, &lp);
        QVERIFY(std::fabs(prev - 1.3130471810589328) < 1e-6);
        QVERIFY(std::fabs(lp - -1.5204089552030178) < 1e-6);
    }

    void parityCatchesWrongOutputs_data() {
        QTest::addColumn<int>("kind");
        QTest::newRow("off by a little") << 0;
        QTest::newRow("nan") << 1;
        QTest::newRow("inf") << 2;
        QTest::newRow("element not written") << 3;
        QTest::newRow("wrong size") << 4;
        QTest::newRow("second output wrong") << 5;
    }
    void parityCatchesWrongOutputs() {
        QFETCH(int, kind);
        const auto& op = *find_op(kind == 5 ? kFlowSdeStep : kFlowMatchStep);
        const Dims dims = kind == 5 ? Dims{4, 33, 0} : Dims{1023, 0, 0};
        Workload w(op, dims);
        auto out = w.make_outputs();
        op.reference(w.args(out));
        QVERIFY(check_parity(op, dims, out, w.reference()).pass);
        switch (kind) {
        case 0:
            out[0][500] *= 1.001f;
            out[0][500] += 1e-3f;
            break;
        case 1:
            out[0][7] = std::numeric_limits<float>::quiet_NaN();
            break;
        case 2:
            out[0][0] = std::numeric_limits<float>::infinity();
            break;
        case 3:
            out = w.make_outputs();
            op.reference(w.args(out));
            out[0][1022] = std::numeric_limits<float>::quiet_NaN();
            break;
        case 4:
            out[0].pop_back();
            break;
        case 5:
            out[1][3] += 0.01f;
            break;
        }
        const auto parity = check_parity(op, dims, out, w.reference());
        QVERIFY(!parity.pass);
        QCOMPARE(std::string(parity.verdict()), std::string("FAIL"));
        QVERIFY(!parity.first_failure.empty());
        if (kind == 1 || kind == 2 || kind == 3)
            QVERIFY(parity.non_finite > 0);
    }

    // A NaN the reference also produces is still a failure: NaN never passes.
    void nanNeverPasses() {
        const auto& op = *find_op(kFlowMatchStep);
        const Dims dims{4, 0, 0};
        std::vector<std::vector<float>> got = {{1, 2, NAN, 4}};
        std::vector<std::vector<float>> ref = {{1, 2, NAN, 4}};
        QVERIFY(!check_parity(op, dims, got, ref).pass);
    }

    void workloadIsDeterministic() {
        const auto& op = *find_op(kFlowSdeStep);
        Workload a(op, {3, 100, 0}, 7), b(op, {3, 100, 0}, 7), c(op, {3, 100, 0}, 8);
        QVERIFY(a.input(0) == b.input(0));
        QVERIFY(a.input(2) == b.input(2));
        QVERIFY(a.input(0) != c.input(0));
        // Pinned values: the generator must not change silently (reports compare inputs).
        QCOMPARE(Workload(*find_op(kFlowMatchStep), {2, 0, 0}, 1).input(0).size(), std::size_t(2));
    }

    void parseDims_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("canonical");
        QTest::newRow("1d") << "flow_match_step"
                            << "1M" << true << "1048576";
        QTest::newRow("2d single") << "rms_norm"
                                   << "4096" << true << "4x1024";
        QTest::newRow("2d small") << "rms_norm"
                                  << "7" << true << "1x7";
        QTest::newRow("2d explicit") << "flow_sde_step"
                                     << "3x5" << true << "3x5";
        QTest::newRow("gemm cube") << "gemm"
                                   << "512" << true << "512x512x512";
        QTest::newRow("gemm full") << "gemm"
                                   << "2x3x4" << true << "2x3x4";
        QTest::newRow("wrong rank") << "gemm"
                                    << "2x3" << false << "";
        QTest::newRow("zero") << "flow_match_step"
                              << "0" << false << "";
        QTest::newRow("negative") << "flow_match_step"
                                  << "-5" << false << "";
        QTest::newRow("junk") << "flow_match_step"
                              << "12abc" << false << "";
        QTest::newRow("empty") << "flow_match_step"
                               << "" << false << "";
        QTest::newRow("huge") << "flow_match_step"
                              << "999999999999999" << false << "";
        QTest::newRow("huge gemm") << "gemm"
                                   << "2Gx2Gx2G" << false << "";
    }
    void parseDims() {
        QFETCH(QString, op);
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(QString, canonical);
        const auto* info = find_op(op.toStdString());
        std::string error;
        auto d = parse_dims(*info, text.toStdString(), &error);
        QCOMPARE(d.has_value(), ok);
        if (ok)
            QCOMPARE(QString::fromStdString(dims_to_string(*info, *d)), canonical);
        else
            QVERIFY(!error.empty());
    }

    void defaultSweepGoesPastTheCache() {
        for (const auto& op : ops()) {
            const auto sizes = default_sizes(op, 32 << 20);
            QVERIFY(sizes.size() >= 3);
            if (op.name != kGemm)
                QVERIFY(op.bytes(sizes.back()) >= 64.0 * 1024 * 1024 * 0.99);
            QVERIFY(op.bytes(sizes.front()) < 64.0 * 1024);
        }
    }

    // parallel_for runs every index once and returns after the last, whether the workers
    // are still polling from the call before (calls back to back) or asleep (a pause of
    // twice the polling time first), for counts below, at and above the pool's size.
    void threadPoolRunsEveryTaskOnce() {
        ThreadPool pool(3);
        QCOMPARE(pool.size(), 3u);
        for (const bool pause : {false, true})
            for (const std::int64_t n : {1, 2, 3, 4, 13, 100}) {
                std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
                for (int call = 0; call < 50; ++call) {
                    if (pause && call % 10 == 0)
                        std::this_thread::sleep_for(2 * ThreadPool::kSpin);
                    pool.parallel_for(n,
                                      [&](std::int64_t i) { runs[std::size_t(i)].fetch_add(1); });
                    // Every task ran by the time parallel_for returned.
                    for (std::int64_t i = 0; i < n; ++i)
                        QCOMPARE(runs[std::size_t(i)].load(), call + 1);
                }
            }
        // A pool destroyed right after a call, its workers still polling, and one destroyed
        // before any call: both join their threads and return.
        for (int round = 0; round < 50; ++round) {
            std::atomic<int> done{0};
            {
                ThreadPool pool(3);
                if (round % 2)
                    pool.parallel_for(3, [&](std::int64_t) { done.fetch_add(1); });
            }
            QCOMPARE(done.load(), round % 2 ? 3 : 0);
        }
    }

    // parallel_together starts every task on a thread of its own: the indices differ.
    void threadPoolTogetherUsesEveryThread() {
        ThreadPool pool(3);
        for (int call = 0; call < 20; ++call) {
            if (call % 5 == 0)
                std::this_thread::sleep_for(2 * ThreadPool::kSpin);
            std::atomic<unsigned> mask{0};
            pool.parallel_together(
                3, [&](std::int64_t) { mask.fetch_or(1u << ThreadPool::worker_index()); });
            QCOMPARE(mask.load(), 0b111u);
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pool.parallel_together(4, [](std::int64_t) {}));
    }

    // A pool made by a thread held on one CPU (a 1-thread row or probe is pinned, and the
    // process-wide pool may first be used there) still has workers free to run on every CPU
    // of the process, and its size counts them all.
    void threadPoolMadeOnAPinnedThreadIsNotPinned() {
        cpu_set_t all;
        CPU_ZERO(&all);
        QCOMPARE(pthread_getaffinity_np(pthread_self(), sizeof all, &all), 0);
        const int cpus = CPU_COUNT(&all);
        if (cpus < 2)
            QSKIP("one CPU: a pinned thread's mask is the process's");
        int first = 0;
        while (!CPU_ISSET(first, &all))
            ++first;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0)
            QSKIP("this process may not set its threads' CPUs (sched_setaffinity refused)");
        std::vector<int> seen(3, 0);
        {
            ThreadPool pool(3);
            pool.parallel_together(3, [&](std::int64_t) {
                cpu_set_t mine;
                CPU_ZERO(&mine);
                pthread_getaffinity_np(pthread_self(), sizeof mine, &mine);
                seen[ThreadPool::worker_index()] = CPU_COUNT(&mine);
            });
        }
        const unsigned available = ThreadPool::available_cpus();
        QCOMPARE(pthread_setaffinity_np(pthread_self(), sizeof all, &all), 0);
        QCOMPARE(available, unsigned(cpus)); // not the pinned thread's 1
        // The calling (pinned) thread is index 0; the workers' masks are the process's.
        QCOMPARE(seen[0], 1);
        QCOMPARE(seen[1], cpus);
        QCOMPARE(seen[2], cpus);
    }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"

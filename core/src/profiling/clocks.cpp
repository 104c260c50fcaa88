// SPDX-License-Identifier: MIT
#include <switchyard/profiling/clocks.h>
#include <switchyard/profiling/stats.h>

#include "util/jsonread.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace switchyard {

// The module is one translation unit (SWITCHYARD_UNITY_BUILD): every helper here is named
// clocks_* so that it cannot meet another file's.
namespace {

std::int64_t clocks_now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

const char* clocks_errno_name(int e) noexcept {
    static constexpr std::pair<int, const char*> kNames[] = {
        {EACCES, "EACCES"}, {EPERM, "EPERM"},           {ENOENT, "ENOENT"},
        {ENODEV, "ENODEV"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {ENOSYS, "ENOSYS"},
        {EINVAL, "EINVAL"}, {EMFILE, "EMFILE"},         {EBUSY, "EBUSY"}};
    for (const auto& [value, name] : kNames)
        if (value == e)
            return name;
    return nullptr;
}

// The first line of a small /proc or /sys file, or "" when it cannot be read.
std::string clocks_read_small_file(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return {};
    char buf[64];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0)
        return {};
    std::string s(buf, std::size_t(n));
    if (const auto nl = s.find('\n'); nl != std::string::npos)
        s.resize(nl);
    return s;
}

bool clocks_path_exists(const char* path) noexcept {
    struct stat st {};
    return ::stat(path, &st) == 0;
}

// Why perf_event_open refused, in words a user can act on.
std::string clocks_open_failure(int e) {
    const char* name = clocks_errno_name(e);
    std::string out = std::string("perf_event_open: ") + (name ? name : std::strerror(e));
    if (e == EACCES || e == EPERM) {
        const auto paranoid = clocks_read_small_file("/proc/sys/kernel/perf_event_paranoid");
        out += paranoid.empty() ? std::string(" (not permitted: a seccomp filter or a container?)")
                                : " (kernel.perf_event_paranoid=" + paranoid + ")";
    } else if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP) {
        const bool pmu = clocks_path_exists("/sys/bus/event_source/devices/cpu") ||
                         clocks_path_exists("/sys/bus/event_source/devices/cpu_core");
        out += pmu ? " (the CPU PMU has no cycles event)"
                   : " (no CPU PMU in /sys/bus/event_source/devices: a VM without a virtual PMU?)";
    } else if (e == ENOSYS) {
        out += " (the kernel has no perf events)";
    } else if (name) {
        out += std::string(" (") + std::strerror(e) + ")";
    }
    return out;
}

// One hardware counter of the calling thread, counting from now on; -1 with errno set.
int clocks_open_counter(std::uint32_t type, std::uint64_t config) noexcept {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = config;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr.disabled = 0; // counts from the start: start()/stop() read deltas, one read() each
    attr.inherit = 0;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = ::syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */,
                              -1 /* no group */, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -1 : int(fd);
}

// A counter's delta scaled for multiplexing: the count while it ran, stretched to the time
// it was enabled. False when it never ran (no time on the PMU) or went backwards.
bool clocks_scaled_delta(std::uint64_t v0, std::uint64_t e0, std::uint64_t r0, std::uint64_t v1,
                         std::uint64_t e1, std::uint64_t r1, double& value, double& enabled,
                         double& running_fraction) noexcept {
    if (v1 < v0 || e1 < e0 || r1 < r0)
        return false;
    const double dv = double(v1 - v0), de = double(e1 - e0), dr = double(r1 - r0);
    if (dr <= 0)
        return false;
    running_fraction = de > 0 ? std::min(1.0, dr / de) : 1.0;
    value = dr < de ? dv * (de / dr) : dv;
    enabled = de;
    return true;
}

bool clocks_known(double ghz) noexcept {
    return std::isfinite(ghz) && ghz > 0;
}

// The chain itself: `iterations` blocks of 128 adds, each add waiting for the previous one
// (x is both source and destination), so the block takes 128 cycles at whatever clock the
// core runs; the loop counter's increment and branch go to other ALUs alongside.
__attribute__((noinline)) std::uint64_t clocks_add_chain(std::int64_t iterations,
                                                         std::uint64_t x) noexcept {
    static_assert(kDependentAddsPerIteration == 128, "the asm below writes out 128 adds");
    std::uint64_t one = 1;
    asm volatile("" : "+r"(one)); // not a constant the compiler could fold the chain with
    for (std::int64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__) || defined(__i386__)
        asm volatile(".rept 128\n\t{addq %1, %0|add %0, %1}\n\t.endr" : "+r"(x) : "r"(one));
#else
        for (int k = 0; k < 128; ++k) {
            x += one;
            asm volatile("" : "+r"(x));
        }
#endif
    }
    return x;
}

} // namespace

double CpuClockSample::ghz() const noexcept {
    if (!valid || cycles <= 0)
        return 0;
    const double ns = enabled_ns > 0 ? enabled_ns : elapsed_ns;
    return ns > 0 ? cycles / ns : 0;
}

CpuClockCounter::CpuClockCounter() : m_thread(std::this_thread::get_id()) {
    open_cycles(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true);
}

CpuClockCounter::CpuClockCounter(std::uint32_t perf_type, std::uint64_t perf_config)
    : m_thread(std::this_thread::get_id()) {
    open_cycles(perf_type, perf_config, false);
}

void CpuClockCounter::open_cycles(std::uint32_t type, std::uint64_t config, bool with_ref) {
    const bool cycles = type == PERF_TYPE_HARDWARE && config == PERF_COUNT_HW_CPU_CYCLES;
    const std::string name = cycles ? std::string("perf_event_open cycles")
                                    : "perf_event_open type " + std::to_string(type) + " config " +
                                          std::to_string(config);
    m_cycles_fd = clocks_open_counter(type, config);
    if (m_cycles_fd < 0) {
        m_method = clocks_open_failure(errno);
        return;
    }
    // Reading it once proves the fd gives what read_counter expects.
    Reading probe;
    if (!read_counter(m_cycles_fd, probe)) {
        const int e = errno;
        close_all();
        m_method = name + ": read failed (" + std::string(std::strerror(e)) + ")";
        return;
    }
    if (with_ref) {
        m_ref_fd = clocks_open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES);
        if (m_ref_fd >= 0 && !read_counter(m_ref_fd, probe)) {
            ::close(m_ref_fd);
            m_ref_fd = -1;
        }
    }
    m_method = m_ref_fd >= 0 ? name + " + ref-cycles" : name;
}

CpuClockCounter::~CpuClockCounter() {
    close_all();
}

CpuClockCounter::CpuClockCounter(CpuClockCounter&& other) noexcept
    : m_cycles_fd(other.m_cycles_fd), m_ref_fd(other.m_ref_fd), m_thread(other.m_thread),
      m_method(std::move(other.m_method)), m_started(other.m_started),
      m_cycles_start(other.m_cycles_start), m_ref_start(other.m_ref_start),
      m_start_ns(other.m_start_ns) {
    other.m_cycles_fd = other.m_ref_fd = -1;
    other.m_started = false;
    other.m_method = "moved from";
}

CpuClockCounter& CpuClockCounter::operator=(CpuClockCounter&& other) noexcept {
    if (this != &other) {
        close_all();
        m_cycles_fd = other.m_cycles_fd;
        m_ref_fd = other.m_ref_fd;
        m_thread = other.m_thread;
        m_method = std::move(other.m_method);
        m_started = other.m_started;
        m_cycles_start = other.m_cycles_start;
        m_ref_start = other.m_ref_start;
        m_start_ns = other.m_start_ns;
        other.m_cycles_fd = other.m_ref_fd = -1;
        other.m_started = false;
        other.m_method = "moved from";
    }
    return *this;
}

void CpuClockCounter::close_all() noexcept {
    if (m_cycles_fd >= 0)
        ::close(m_cycles_fd);
    if (m_ref_fd >= 0)
        ::close(m_ref_fd);
    m_cycles_fd = m_ref_fd = -1;
    m_started = false;
}

bool CpuClockCounter::read_counter(int fd, Reading& out) noexcept {
    std::uint64_t buf[3];
    ssize_t n;
    do
        n = ::read(fd, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n != ssize_t(sizeof buf))
        return false;
    out.value = buf[0];
    out.enabled = buf[1];
    out.running = buf[2];
    return true;
}

bool CpuClockCounter::start() noexcept {
    // Another thread's call changes nothing (the owner may be sampling meanwhile).
    if (m_cycles_fd < 0 || std::this_thread::get_id() != m_thread)
        return false;
    m_started = false;
    if (m_ref_fd >= 0 && !read_counter(m_ref_fd, m_ref_start))
        m_ref_start = {};
    m_start_ns = clocks_now_ns();
    if (!read_counter(m_cycles_fd, m_cycles_start))
        return false;
    m_started = true;
    return true;
}

CpuClockSample CpuClockCounter::stop() noexcept {
    CpuClockSample s;
    if (!m_started || m_cycles_fd < 0 || std::this_thread::get_id() != m_thread)
        return s;
    m_started = false;
    Reading c;
    const bool ok = read_counter(m_cycles_fd, c);
    s.elapsed_ns = double(clocks_now_ns() - m_start_ns);
    if (!ok)
        return s;
    s.valid = clocks_scaled_delta(m_cycles_start.value, m_cycles_start.enabled,
                                  m_cycles_start.running, c.value, c.enabled, c.running, s.cycles,
                                  s.enabled_ns, s.running_fraction);
    if (!s.valid) {
        s.cycles = s.enabled_ns = s.running_fraction = 0;
        return s;
    }
    Reading r;
    double ref_enabled = 0, ref_fraction = 0;
    if (m_ref_fd >= 0 && read_counter(m_ref_fd, r) &&
        !clocks_scaled_delta(m_ref_start.value, m_ref_start.enabled, m_ref_start.running, r.value,
                             r.enabled, r.running, s.ref_cycles, ref_enabled, ref_fraction))
        s.ref_cycles = 0;
    return s;
}

double dependent_add_chain_ghz(int iterations) {
    if (iterations <= 0)
        return 0;
    double best = 0;
    std::uint64_t x = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = clocks_now_ns();
        x = clocks_add_chain(iterations, x);
        const auto t1 = clocks_now_ns();
        if (t1 > t0)
            best =
                std::max(best, double(iterations) * kDependentAddsPerIteration / double(t1 - t0));
    }
    asm volatile("" : : "r"(x)); // the chain's result is used
    return best;
}

void to_json(nlohmann::json& j, const RowClock& c) {
    j = {{"best_ghz", c.best_ghz},
         {"median_ghz", c.median_ghz},
         {"min_ghz", c.min_ghz},
         {"method", c.method},
         {"samples_discarded", c.samples_discarded},
         {"threshold", c.threshold},
         {"throttled", c.throttled}};
    if (!c.none_reason.empty())
        j["none_reason"] = c.none_reason;
}

void from_json(const nlohmann::json& j, RowClock& c) {
    const jsonread::Value v(j, "clock");
    v.expect(jsonread::Kind::Object);
    auto ghz = [&](const char* key) {
        const auto member = v.at(key);
        const double d = member.num();
        if (d < 0)
            member.fail("expected a non-negative finite number");
        return d;
    };
    c.best_ghz = ghz("best_ghz");
    c.median_ghz = ghz("median_ghz");
    c.min_ghz = ghz("min_ghz");
    c.method = v.str("method");
    c.samples_discarded = int(v.at("samples_discarded").integer(0, INT_MAX));
    const auto threshold = v.at("threshold");
    c.threshold = threshold.num();
    if (c.threshold < 0 || c.threshold > 1)
        threshold.fail("expected a number from 0 to 1");
    c.throttled = v.boolean("throttled");
    c.none_reason = v.str("none_reason", "");
}

RowClock RowClock::none(std::string reason) {
    RowClock c;
    c.method = "none";
    c.none_reason = std::move(reason);
    return c;
}

nlohmann::json RowClock::to_json() const {
    return *this;
}

RowClock RowClock::from_json(const nlohmann::json& j) {
    return j.get<RowClock>();
}

ThrottleVerdict apply_throttle_threshold(const RowClockReadings& readings, double threshold) {
    if (!(threshold >= 0 && threshold <= 1))
        throw std::invalid_argument("throttle threshold must be from 0 to 1, got " +
                                    std::to_string(threshold));
    ThrottleVerdict out;
    out.keep.assign(readings.sample_ghz.size(), true);
    out.clock.method = readings.method;
    out.clock.threshold = threshold;

    std::vector<double> known;
    known.reserve(readings.sample_ghz.size());
    for (double g : readings.sample_ghz)
        if (clocks_known(g))
            known.push_back(g);

    if (!known.empty()) {
        std::sort(known.begin(), known.end());
        const double best = known.back();
        const double floor = threshold * best;
        for (std::size_t i = 0; i < readings.sample_ghz.size(); ++i) {
            const double g = readings.sample_ghz[i];
            if (clocks_known(g) && g < floor) {
                out.keep[i] = false;
                ++out.discarded;
            }
        }
        out.clock.best_ghz = best;
        out.clock.median_ghz = quantile_sorted(known, 0.5);
        out.clock.min_ghz = known.front();
        out.clock.samples_discarded = out.discarded;
        out.clock.throttled = out.discarded > 0;
        return out;
    }

    const double before = readings.chain_before_ghz, after = readings.chain_after_ghz;
    const bool have_before = clocks_known(before), have_after = clocks_known(after);
    if (have_before && have_after) {
        out.clock.best_ghz = std::max(before, after);
        out.clock.min_ghz = std::min(before, after);
        out.clock.median_ghz = (before + after) / 2;
        out.clock.throttled = after < threshold * before;
    } else if (have_before || have_after) {
        const double g = have_before ? before : after;
        out.clock.best_ghz = out.clock.median_ghz = out.clock.min_ghz = g;
    }
    return out;
}

} // namespace switchyard

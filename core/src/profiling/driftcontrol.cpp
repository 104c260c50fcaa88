// SPDX-License-Identifier: MIT
#include <switchyard/profiling/driftcontrol.h>

#include <switchyard/kernels/reference.h>

#include "profiling/vectorstate.h"
#include "util/jsonread.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

namespace switchyard {

namespace {

std::vector<double> times_of(const DriftControl& c) {
    std::vector<double> out;
    for (const auto& s : c.samples)
        if (s.median > 0 && std::isfinite(s.median))
            out.push_back(s.median);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

bool DriftControl::usable() const {
    return times_of(*this).size() >= 2;
}

double DriftControl::center() const {
    const auto t = times_of(*this);
    if (t.empty())
        return 0;
    const std::size_t n = t.size();
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

double DriftControl::fastest() const {
    const auto t = times_of(*this);
    return t.empty() ? 0 : t.front();
}

double DriftControl::slowest() const {
    const auto t = times_of(*this);
    return t.empty() ? 0 : t.back();
}

double DriftControl::range() const {
    const auto t = times_of(*this);
    return t.size() >= 2 ? t.back() / t.front() : 1;
}

std::string DriftControl::text() const {
    if (samples.empty())
        return "no drift control";
    char buf[160];
    std::snprintf(buf, sizeof buf, "the control ran %.2f-%.2f us (%.2fx) over %zu samples",
                  fastest() * 1e6, slowest() * 1e6, range(), samples.size());
    return buf;
}

nlohmann::json DriftControl::to_json() const {
    auto list = nlohmann::json::array();
    for (const auto& s : samples)
        list.push_back({{"when", s.when}, {"at_s", s.at_s}, {"median", s.median}});
    return {{"sentinel", sentinel}, {"samples", list}};
}

DriftControl DriftControl::from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "control");
    v.expect(jsonread::Kind::Object);
    DriftControl c;
    c.sentinel = v.str("sentinel");
    const auto samples = v.at("samples");
    samples.expect(jsonread::Kind::Array);
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const auto s = samples[i];
        s.expect(jsonread::Kind::Object);
        Sample one;
        one.when = s.str("when", std::string());
        one.at_s = s.num("at_s", 0.0);
        one.median = s.num("median");
        if (!(one.median >= 0))
            s.at("median").fail("expected a time >= 0 (seconds per launch)");
        c.samples.push_back(std::move(one));
    }
    return c;
}

double MachineDrift::explains() const {
    if (!known || !(low > 0) || !(high > 0))
        return 0;
    return std::max(0.0, std::max(high, 1 / low) - 1);
}

std::string MachineDrift::text() const {
    if (!known)
        return "the machine's drift between the reports is unknown (a report without a drift "
               "control)";
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "the machine's control ran %.2f-%.2fx as long in B as in A (center %.2fx): a "
                  "difference up to %.0f %% can be the machine's drift, not the code's",
                  low, high, center, explains() * 100);
    return buf;
}

MachineDrift MachineDrift::between(const DriftControl& a, const DriftControl& b) {
    MachineDrift d;
    if (!a.usable() || !b.usable() || a.sentinel != b.sentinel)
        return d;
    d.known = true;
    d.center = b.center() / a.center();
    d.low = b.fastest() / a.slowest();
    d.high = b.slowest() / a.fastest();
    return d;
}

double measure_sentinel() {
    using Clock = std::chrono::steady_clock;
    constexpr std::size_t n = std::size_t(DriftControl::kSentinelSize);
    // Its three arrays at the same offsets of one page-aligned block in every process, apart
    // by a page and 256 bytes, not wherever a process's heap happens to put them: the
    // sentinel compares processes (the controller's, each worker's) and runs.
    constexpr std::size_t stride = n + 64;
    const std::unique_ptr<float, decltype(&std::free)> block(
        static_cast<float*>(
            std::aligned_alloc(4096, (3 * stride * sizeof(float) + 4095) / 4096 * 4096)),
        &std::free);
    if (!block)
        throw std::bad_alloc();
    float* x = block.get();
    float* v = x + stride;
    float* out = v + stride;
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = float(i % 97) * 0.01f;
        v[i] = float(i % 89) * -0.02f;
    }
    auto launch = [&] { reference::flow_match_step(std::int64_t(n), x, v, 0.01, out); };
    // Warm up, then size a batch to about 0.5 ms so the clock's resolution does not matter.
    int per_batch = 1;
    for (;;) {
        const auto t0 = Clock::now();
        for (int k = 0; k < per_batch; ++k)
            launch();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (s >= 5e-4 || per_batch >= (1 << 16))
            break;
        per_batch *= 2;
    }
    std::vector<double> batch;
    for (int b = 0; b < DriftControl::kSentinelBatches; ++b) {
        const auto t0 = Clock::now();
        for (int k = 0; k < per_batch; ++k)
            launch();
        batch.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / per_batch);
    }
    std::sort(batch.begin(), batch.end());
    return batch[batch.size() / 2];
}

} // namespace switchyard

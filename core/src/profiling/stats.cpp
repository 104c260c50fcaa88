// SPDX-License-Identifier: MIT
#include <switchyard/profiling/stats.h>

#include "util/jsonread.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace switchyard {

void thin_samples(std::vector<double>& samples, std::int64_t keep_samples) {
    if (keep_samples < 0 || std::int64_t(samples.size()) <= keep_samples)
        return;
    std::vector<double> thin;
    const std::size_t keep = std::size_t(keep_samples);
    thin.reserve(keep);
    for (std::size_t i = 0; i < keep; ++i)
        thin.push_back(samples[i * samples.size() / keep]);
    samples.swap(thin);
}

double quantile_sorted(std::span<const double> sorted, double q) {
    if (sorted.empty())
        return 0.0;
    const double pos = q * double(sorted.size() - 1);
    const auto lo = std::size_t(std::floor(pos));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - double(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

SampleStats SampleStats::from(std::span<const double> samples) {
    SampleStats s;
    s.count = std::int64_t(samples.size());
    if (samples.empty())
        return s;
    std::vector<double> sorted(samples.begin(), samples.end());
    for (double v : sorted)
        if (!std::isfinite(v))
            throw std::invalid_argument("non-finite timing sample");
    std::sort(sorted.begin(), sorted.end());
    s.min = sorted.front();
    s.max = sorted.back();
    s.median = quantile_sorted(sorted, 0.5);
    s.p90 = quantile_sorted(sorted, 0.9);
    double sum = 0;
    for (double v : sorted)
        sum += v;
    s.mean = sum / double(sorted.size());
    if (sorted.size() > 1) {
        double ss = 0;
        for (double v : sorted)
            ss += (v - s.mean) * (v - s.mean);
        s.stddev = std::sqrt(ss / double(sorted.size() - 1));
    }
    s.rel_noise = s.mean > 0 ? s.stddev / s.mean : 0.0;
    return s;
}

void to_json(nlohmann::json& j, const SampleStats& s) {
    j = {{"count", s.count},   {"min", s.min}, {"max", s.max},       {"mean", s.mean},
         {"median", s.median}, {"p90", s.p90}, {"stddev", s.stddev}, {"rel_noise", s.rel_noise}};
}

void from_json(const nlohmann::json& j, SampleStats& s) {
    const jsonread::Value v(j, "stats");
    v.expect(jsonread::Kind::Object);
    auto non_negative = [&](const char* key) {
        const auto member = v.at(key);
        const double d = member.num();
        if (d < 0)
            member.fail("expected a non-negative finite number");
        return d;
    };
    s.count = v.at("count").integer(0, std::int64_t(9e15));
    s.min = non_negative("min");
    s.max = non_negative("max");
    s.mean = non_negative("mean");
    s.median = non_negative("median");
    s.p90 = non_negative("p90");
    s.stddev = non_negative("stddev");
    s.rel_noise = non_negative("rel_noise");
}

nlohmann::json SampleStats::to_json() const {
    return *this;
}

SampleStats SampleStats::from_json(const nlohmann::json& j) {
    return j.get<SampleStats>();
}

double StoppingRule::rel_noise() const noexcept {
    if (m_count < 2 || m_mean <= 0)
        return INFINITY;
    return std::sqrt(m_m2 / double(m_count - 1)) / m_mean;
}

StoppingRule::Stop StoppingRule::add(double sample, double elapsed_s) {
    if (m_stop != Stop::None)
        return m_stop;
    ++m_count;
    const double delta = sample - m_mean;
    m_mean += delta / double(m_count);
    m_m2 += delta * (sample - m_mean);
    if (m_count >= m_criteria.min_samples && rel_noise() < m_criteria.max_noise)
        m_stop = Stop::Converged;
    else if (m_count >= m_criteria.max_samples)
        m_stop = Stop::MaxSamples;
    else if (elapsed_s >= m_criteria.time_budget_s)
        m_stop = Stop::TimeBudget;
    return m_stop;
}

std::string_view StoppingRule::to_string(Stop s) noexcept {
    switch (s) {
    case Stop::None:
        return "none";
    case Stop::Converged:
        return "converged";
    case Stop::TimeBudget:
        return "time_budget";
    case Stop::MaxSamples:
        return "max_samples";
    }
    return "none";
}

namespace {

// Number of arrangements with U statistic == u for sizes (m, n), all u at once:
// f(m, n) = f(m - 1, n) shifted by n  +  f(m, n - 1)  (the largest value is in a or b).
std::vector<double> u_distribution(std::size_t m, std::size_t n) {
    // table[j] for the current m over n' = 0..n, as vectors of counts.
    std::vector<std::vector<double>> prev(n + 1), cur(n + 1);
    for (std::size_t j = 0; j <= n; ++j)
        prev[j] = {1.0}; // m == 0: one arrangement, U = 0
    for (std::size_t i = 1; i <= m; ++i) {
        cur[0] = {1.0}; // n == 0: U = 0
        for (std::size_t j = 1; j <= n; ++j) {
            std::vector<double> f(i * j + 1, 0.0);
            // largest is from a (size i): every b is below it -> U gains j
            for (std::size_t u = 0; u < prev[j].size(); ++u)
                f[u + j] += prev[j][u];
            // largest is from b: U unchanged
            for (std::size_t u = 0; u < cur[j - 1].size(); ++u)
                f[u] += cur[j - 1][u];
            cur[j] = std::move(f);
        }
        std::swap(prev, cur);
    }
    return prev[n];
}

} // namespace

double mann_whitney_p(std::span<const double> a, std::span<const double> b) {
    const std::size_t n1 = a.size(), n2 = b.size();
    if (n1 == 0 || n2 == 0)
        return 1.0;
    struct Item {
        double v;
        int group;
    };
    std::vector<Item> all;
    all.reserve(n1 + n2);
    for (double v : a)
        all.push_back({v, 0});
    for (double v : b)
        all.push_back({v, 1});
    std::sort(all.begin(), all.end(), [](const Item& x, const Item& y) { return x.v < y.v; });
    const double n = double(n1 + n2);
    double r1 = 0, tie_term = 0;
    bool ties = false;
    for (std::size_t i = 0; i < all.size();) {
        std::size_t j = i;
        while (j < all.size() && all[j].v == all[i].v)
            ++j;
        const double t = double(j - i);
        const double rank = (double(i + 1) + double(j)) / 2.0; // average rank of the run
        for (std::size_t k = i; k < j; ++k)
            if (all[k].group == 0)
                r1 += rank;
        if (t > 1) {
            ties = true;
            tie_term += t * t * t - t;
        }
        i = j;
    }
    const double u1 = r1 - double(n1) * double(n1 + 1) / 2.0;
    const double u2 = double(n1) * double(n2) - u1;
    const double u = std::max(u1, u2);
    if (n1 < 8 && n2 < 8 && !ties) {
        const auto dist = u_distribution(n1, n2);
        double total = 0, tail = 0;
        for (std::size_t k = 0; k < dist.size(); ++k) {
            total += dist[k];
            if (double(k) >= u)
                tail += dist[k];
        }
        return std::min(1.0, 2.0 * tail / total);
    }
    const double mu = double(n1) * double(n2) / 2.0;
    const double var = double(n1) * double(n2) / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if (var <= 0)
        return 1.0;
    const double z = (u - mu - 0.5) / std::sqrt(var);
    return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

} // namespace switchyard

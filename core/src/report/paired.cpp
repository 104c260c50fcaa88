// SPDX-License-Identifier: MIT
// The paired A/B statistics (report/paired.h): the signed-rank test, the bootstrap interval of
// the median log ratio, and the verdict rule over a run's rows.
#include <switchyard/report/paired.h>

#include "util/jsonread.h"
#include "util/splitmix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace switchyard {

namespace paired_detail {

double median_of_sorted(const std::vector<double>& v) {
    const std::size_t n = v.size();
    if (n == 0)
        return 0;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double median_of_copy(std::span<const double> d) {
    std::vector<double> v(d.begin(), d.end());
    std::sort(v.begin(), v.end());
    return median_of_sorted(v);
}

std::string percent(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", v * 100);
    return buf;
}

} // namespace paired_detail

std::string paired_rule(const CompareOptions& options) {
    char fdr[32];
    std::snprintf(fdr, sizeof fdr, "%g", options.fdr);
    return "paired turns (A B B A ...): false-discovery rate " + std::string(fdr) +
           " (Benjamini-Hochberg over all rows, signed-rank test on the pairs' log ratios); a "
           "difference must exceed " +
           paired_detail::percent(options.min_effect) +
           " and the gap rows of identical code on both sides showed in the run; SAME needs the 90 "
           "% bootstrap interval of the median ratio within it";
}

double signed_rank_p(std::span<const double> d) {
    std::vector<double> nz;
    for (double x : d)
        if (x != 0 && std::isfinite(x))
            nz.push_back(x);
    const std::size_t n = nz.size();
    if (n == 0)
        return 1;
    // Ranks of |x|, ties given their mean rank (doubled, so they stay integers).
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return std::fabs(nz[a]) < std::fabs(nz[b]); });
    std::vector<long> rank2(n);
    double tie_term = 0;
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i;
        while (j + 1 < n && std::fabs(nz[order[j + 1]]) == std::fabs(nz[order[i]]))
            ++j;
        const long r2 = long(i + 1 + j + 1); // twice the mean rank of positions i..j
        for (std::size_t k = i; k <= j; ++k)
            rank2[order[k]] = r2;
        const double t = double(j - i + 1);
        tie_term += t * t * t - t;
        i = j + 1;
    }
    long w2 = 0; // twice the sum of the positive ranks
    for (std::size_t i = 0; i < n; ++i)
        if (nz[i] > 0)
            w2 += rank2[i];
    const long total2 = long(n * (n + 1)); // twice n(n+1)/2
    if (n <= 25) {
        // Exact: the distribution of twice the positive rank sum over the 2^n sign choices,
        // counted by dynamic programming over the (doubled) ranks.
        std::vector<double> ways(std::size_t(total2) + 1, 0.0);
        ways[0] = 1;
        for (std::size_t i = 0; i < n; ++i)
            for (long s = total2; s >= rank2[i]; --s)
                ways[std::size_t(s)] += ways[std::size_t(s - rank2[i])];
        const long lo = std::min(w2, total2 - w2);
        double tail = 0;
        for (long s = 0; s <= lo; ++s)
            tail += ways[std::size_t(s)];
        return std::min(1.0, 2 * tail / std::ldexp(1.0, int(n)));
    }
    const double w = double(w2) / 2, nn = double(n);
    const double mean = nn * (nn + 1) / 4;
    const double var = nn * (nn + 1) * (2 * nn + 1) / 24 - tie_term / 48;
    if (!(var > 0))
        return 1;
    const double z = (std::fabs(w - mean) - 0.5) / std::sqrt(var);
    return std::min(1.0, std::erfc(std::max(0.0, z) / std::sqrt(2.0)));
}

std::pair<double, double> bootstrap_median_interval(std::span<const double> d, double level,
                                                    std::size_t resamples, std::uint64_t seed) {
    if (d.empty())
        return {0, 0};
    if (d.size() == 1 || resamples == 0)
        return {d[0], d[0]};
    std::vector<double> medians;
    medians.reserve(resamples);
    std::vector<double> draw(d.size());
    std::uint64_t state = seed;
    for (std::size_t r = 0; r < resamples; ++r) {
        for (auto& x : draw)
            x = d[std::size_t(splitmix64(state) % d.size())];
        std::sort(draw.begin(), draw.end());
        medians.push_back(paired_detail::median_of_sorted(draw));
    }
    std::sort(medians.begin(), medians.end());
    const double tail = (1 - std::clamp(level, 0.0, 1.0)) / 2;
    const auto at = [&](double q) {
        const double pos = q * double(medians.size() - 1);
        return medians[std::size_t(std::lround(pos))];
    };
    return {at(tail), at(1 - tail)};
}

bool settled_same(std::span<const double> log_ratios, double threshold) {
    if (log_ratios.size() < PairedComparison::kMinPairs)
        return false;
    const auto [lo, hi] = bootstrap_median_interval(log_ratios);
    const double half = std::log1p(threshold / 2);
    return lo >= -half && hi <= half;
}

std::vector<PairedComparison> judge_paired(std::span<const std::vector<double>> log_ratios,
                                           const CompareOptions& options,
                                           const std::vector<bool>& identical_code) {
    std::vector<PairedComparison> out;
    out.reserve(log_ratios.size());
    for (std::size_t i = 0; i < log_ratios.size(); ++i)
        out.push_back(
            measure_paired(log_ratios[i], i < identical_code.size() && identical_code[i]));
    decide_paired(out, options);
    return out;
}

PairedComparison measure_paired(std::span<const double> d, bool identical_code) {
    PairedComparison c;
    c.pairs = d.size();
    c.identical_code = identical_code;
    if (d.empty())
        return c;
    const double center = paired_detail::median_of_copy(d);
    c.ratio = std::exp(center);
    const auto [lo, hi] = bootstrap_median_interval(d);
    c.ci_low = std::exp(lo);
    c.ci_high = std::exp(hi);
    const double mean = std::accumulate(d.begin(), d.end(), 0.0) / double(d.size());
    double ss = 0;
    for (double x : d)
        ss += (x - mean) * (x - mean);
    c.noise = d.size() > 1 ? std::sqrt(ss / double(d.size() - 1)) : 0;
    c.p_value = signed_rank_p(d);
    return c;
}

void decide_paired(std::span<PairedComparison> out, const CompareOptions& options) {
    using paired_detail::percent;
    std::vector<double> p;
    for (const auto& c : out)
        p.push_back(c.pairs > 0 ? c.p_value : 1.0);
    const auto q = benjamini_hochberg(p);
    // The machine gap: how far apart the sides ran where their code is the same, as far as
    // each such row shows it beyond doubt (the near end of its interval, where the interval
    // excludes no gap; 0 where it holds 1): one control row that a burst of load scattered
    // does not lift the bar for every other row.
    double gap = 0;
    for (const auto& c : out)
        if (c.identical_code && c.pairs >= PairedComparison::kMinPairs && c.ci_low > 0 &&
            c.ci_high > 0) {
            const double lo = std::log(c.ci_low), hi = std::log(c.ci_high);
            gap = std::max(gap, lo > 0 ? lo : hi < 0 ? -hi : 0.0);
        }
    for (std::size_t i = 0; i < out.size(); ++i) {
        auto& c = out[i];
        c.threshold = options.min_effect;
        c.q_value = q[i];
        c.machine_gap = std::expm1(gap);
        const double bound = std::log1p(c.threshold);
        // A difference in code must also exceed the gap identical code showed.
        const double beyond = c.identical_code ? bound : std::max(bound, gap);
        const double center = c.ratio > 0 ? std::log(c.ratio) : 0;
        if (c.pairs < PairedComparison::kMinPairs) {
            c.verdict = Verdict::Ambiguous;
            c.note = std::to_string(c.pairs) + " pairs of turns; a verdict needs " +
                     std::to_string(PairedComparison::kMinPairs);
        } else if (c.q_value < options.fdr && std::fabs(center) > beyond) {
            c.verdict = center > 0 ? Verdict::Slower : Verdict::Faster;
            char qtext[32];
            std::snprintf(qtext, sizeof qtext, "%.2g", c.q_value);
            c.note = "paired: " + std::to_string(c.pairs) + " pairs, signed-rank q " + qtext +
                     ", beyond the " + percent(c.threshold) + " threshold";
            if (beyond > bound)
                c.note += " and the " + percent(c.machine_gap) +
                          " the run's identical-code rows moved apart";
        } else if (std::log(c.ci_low) >= -bound && std::log(c.ci_high) <= bound) {
            c.verdict = Verdict::Same;
            c.note = "paired: the 90 % interval of the median ratio is within the " +
                     percent(c.threshold) + " threshold";
        } else {
            c.verdict = Verdict::Ambiguous;
            c.note = c.q_value < options.fdr && std::fabs(center) > bound
                         ? "paired: significant and past the " + percent(c.threshold) +
                               " threshold, but within the " + percent(c.machine_gap) +
                               " that rows of identical code on both sides moved apart in this "
                               "run: the machine can explain it"
                     : c.q_value < options.fdr
                         ? "paired: significant, but within the " + percent(c.threshold) +
                               " threshold, and the interval reaches past it"
                         : "paired: the interval of the median ratio reaches past the " +
                               percent(c.threshold) + " threshold (pair-to-pair noise " +
                               percent(c.noise) + ")";
        }
        if (c.identical_code) {
            // Identical code is never a regression (nor a gain): a gap is the machine's.
            if (c.verdict == Verdict::Faster || c.verdict == Verdict::Slower)
                c.verdict = Verdict::Machine;
            c.note += "; identical code on both sides: a difference is the machine's";
        }
    }
}

nlohmann::json PairedComparison::to_json() const {
    return {{"verdict", to_string(verdict)},
            {"ratio", ratio},
            {"ci_low", ci_low},
            {"ci_high", ci_high},
            {"p_value", p_value},
            {"q_value", q_value},
            {"threshold", threshold},
            {"noise", noise},
            {"machine_gap", machine_gap},
            {"pairs", pairs},
            {"identical_code", identical_code},
            {"note", note}};
}

PairedComparison PairedComparison::from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "paired");
    v.expect(jsonread::Kind::Object);
    PairedComparison c;
    const auto verdict = v.str("verdict", std::string("AMBIGUOUS"));
    bool known = false;
    for (Verdict w :
         {Verdict::Same, Verdict::Faster, Verdict::Slower, Verdict::Ambiguous, Verdict::Machine})
        if (verdict == to_string(w)) {
            c.verdict = w;
            known = true;
        }
    if (!known)
        v.at("verdict").fail("unknown verdict '" + verdict + "'");
    c.ratio = v.num("ratio", 0.0);
    c.ci_low = v.num("ci_low", 0.0);
    c.ci_high = v.num("ci_high", 0.0);
    c.p_value = v.num("p_value", 1.0);
    c.q_value = v.num("q_value", 1.0);
    c.threshold = v.num("threshold", 0.0);
    c.noise = v.num("noise", 0.0);
    c.machine_gap = v.num("machine_gap", 0.0);
    c.pairs = std::size_t(v.integer("pairs", 0, 0, std::int64_t(1) << 30));
    c.identical_code = v.boolean("identical_code", false);
    c.note = v.str("note", std::string());
    return c;
}

} // namespace switchyard

// SPDX-License-Identifier: MIT
#include <switchyard/report/statistics.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace switchyard {

namespace {

// The regularized incomplete beta function I_x(a, b), by its continued fraction (modified
// Lentz), for Student's t distribution.
double incomplete_beta(double a, double b, double x) {
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    if (x > (a + 1) / (a + b + 2)) // the fraction converges fast below this point
        return 1 - incomplete_beta(b, a, 1 - x);
    const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                  a * std::log(x) + b * std::log1p(-x)) /
                         a;
    constexpr double tiny = 1e-300;
    double f = 1, c = 1, d = 0;
    for (int i = 0; i <= 400; ++i) {
        const int m = i / 2;
        double numerator;
        if (i == 0)
            numerator = 1;
        else if (i % 2 == 0)
            numerator = (m * (b - m) * x) / ((a + 2.0 * m - 1) * (a + 2.0 * m));
        else
            numerator = -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1));
        d = 1 + numerator * d;
        d = std::fabs(d) < tiny ? tiny : d;
        d = 1 / d;
        c = 1 + numerator / c;
        c = std::fabs(c) < tiny ? tiny : c;
        const double cd = c * d;
        f *= cd;
        if (std::fabs(1 - cd) < 1e-12)
            break;
    }
    return front * (f - 1);
}

// Student's t distribution: P(T > t) for t >= 0.
double t_upper_tail(double t, double df) {
    return 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

// The t value with P(T > t) = p (0 < p < 0.5), by bisection on the tail.
double t_quantile_upper(double p, double df) {
    double lo = 0, hi = 1;
    while (t_upper_tail(hi, df) > p && hi < 1e6)
        hi *= 2;
    for (int i = 0; i < 100; ++i) {
        const double mid = (lo + hi) / 2;
        (t_upper_tail(mid, df) > p ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
}

double mean_of(std::span<const double> v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

double variance_of(std::span<const double> v) { // sample variance (n - 1)
    const double m = mean_of(v);
    double s = 0;
    for (const double x : v)
        s += (x - m) * (x - m);
    return v.size() > 1 ? s / double(v.size() - 1) : 0;
}

std::vector<double> logs_of(std::span<const double> v) {
    std::vector<double> out;
    out.reserve(v.size());
    for (const double x : v)
        out.push_back(std::log(x));
    return out;
}

bool all_positive(std::span<const double> v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0 && std::isfinite(x); });
}

} // namespace

double student_t_upper_quantile(double p, double df) {
    return t_quantile_upper(p, df);
}

namespace {

// Welch's t statistic of b against a: the difference of the means over its standard error,
// with the Welch-Satterthwaite degrees of freedom; se2 = 0 when neither side varies.
struct Welch {
    double difference = 0, se2 = 0, df = 0;
};

Welch welch(std::span<const double> a, std::span<const double> b) {
    Welch w;
    w.difference = mean_of(b) - mean_of(a);
    const double va = variance_of(a) / double(a.size()), vb = variance_of(b) / double(b.size());
    w.se2 = va + vb;
    if (w.se2 > 0)
        w.df = w.se2 * w.se2 / (va * va / double(a.size() - 1) + vb * vb / double(b.size() - 1));
    return w;
}

double two_sided_p(const Welch& w) {
    if (!(w.se2 > 0))
        return w.difference == 0 ? 1.0 : 0.0;
    const double t2 = w.difference * w.difference / w.se2;
    return std::clamp(incomplete_beta(w.df / 2, 0.5, w.df / (w.df + t2)), 0.0, 1.0);
}

} // namespace

double welch_t_p(std::span<const double> a, std::span<const double> b) {
    if (a.size() < 2 || b.size() < 2)
        return 1;
    return two_sided_p(welch(a, b));
}

std::optional<RunsComparison> compare_runs(std::span<const double> a, std::span<const double> b) {
    if (a.size() < 2 || b.size() < 2 || !all_positive(a) || !all_positive(b))
        return std::nullopt;
    const auto la = logs_of(a), lb = logs_of(b);
    const Welch w = welch(la, lb);
    RunsComparison c;
    c.center_a = std::exp(mean_of(la));
    c.center_b = std::exp(mean_of(lb));
    c.ratio = std::exp(w.difference);
    c.noise = std::sqrt((variance_of(la) + variance_of(lb)) / 2);
    c.p_value = two_sided_p(w);
    // The 90 % confidence interval of the log ratio (two one-sided tests at 5 %).
    if (w.se2 > 0)
        c.ci_half_width = t_quantile_upper(0.05, w.df) * std::sqrt(w.se2);
    return c;
}

std::vector<double> benjamini_hochberg(std::span<const double> p) {
    const std::size_t m = p.size();
    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
    std::vector<double> q(m, 1.0);
    double running = 1.0;
    for (std::size_t k = m; k-- > 0;) { // from the largest p down: q = min over j >= k
        const std::size_t i = order[k];
        running = std::min(running, p[i] * double(m) / double(k + 1));
        q[i] = std::min(1.0, running);
    }
    return q;
}

} // namespace switchyard

// SPDX-License-Identifier: MIT
#include <switchyard/kernels/reference.h>
#include <switchyard/profiling/ops.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace switchyard {

namespace {

OpInfo make_flow_match() {
    OpInfo op;
    op.name = kFlowMatchStep;
    op.dim_names = {"N"};
    op.inputs = {"x", "v"};
    op.outputs = {"out"};
    op.scalar_names = {"dt"};
    op.default_scalars = {-0.03125, 0, 0, 0};
    op.input_elems = [](int, const Dims& d) { return d[0]; };
    op.output_elems = [](int, const Dims& d) { return d[0]; };
    op.bytes = [](const Dims& d) { return 12.0 * double(d[0]); };
    op.flops = [](const Dims& d) { return 2.0 * double(d[0]); };
    op.tolerance = [](const Dims&) { return Tolerance{1e-6, 1e-6}; };
    op.reference = reference::flow_match_step_kernel;
    return op;
}

OpInfo make_flow_sde() {
    OpInfo op;
    op.name = kFlowSdeStep;
    op.dim_names = {"B", "D"};
    op.inputs = {"x", "v", "noise"};
    op.outputs = {"prev", "log_prob"};
    op.scalar_names = {"sigma", "sigma_prev", "sigma_max", "noise_level"};
    op.default_scalars = {0.7, 0.6, 0.98, 0.7};
    op.input_elems = [](int, const Dims& d) { return d[0] * d[1]; };
    op.output_elems = [](int slot, const Dims& d) { return slot == 0 ? d[0] * d[1] : d[0]; };
    op.bytes = [](const Dims& d) { return 16.0 * double(d[0] * d[1]) + 4.0 * double(d[0]); };
    // The reference's arithmetic (reference.cpp), with the per-call constants (x_coef,
    // v_coef, std_dev, log_norm, 2 std_dev^2) hoisted as it hoists them: per element
    // mean = x*xc + v*vc (3), diff = std_dev*noise (1), prev = mean + diff (1), the log-prob
    // term -(diff*diff)/(2 std_dev^2) - log_norm added to the row's sum (4: mul, div, sub,
    // add); per row the mean's division (1). the design's first "~20 BD" was an estimate; the fast
    // variants fold the constant terms out of the sum and execute about 7 per element.
    op.flops = [](const Dims& d) { return 9.0 * double(d[0] * d[1]) + double(d[0]); };
    // log_prob is a mean of D terms: float accumulation differs from the double reference.
    op.tolerance = [](const Dims&) { return Tolerance{1e-5, 1e-5}; };
    op.reference = reference::flow_sde_step_kernel;
    return op;
}

OpInfo make_gemm() {
    OpInfo op;
    op.name = kGemm;
    op.dim_names = {"M", "N", "K"};
    op.inputs = {"A", "B"};
    op.outputs = {"C"};
    op.scalar_names = {"alpha", "beta"};
    op.default_scalars = {1.0, 0.5, 0, 0};
    op.first_output_is_input = true;
    op.input_elems = [](int slot, const Dims& d) { return slot == 0 ? d[0] * d[2] : d[2] * d[1]; };
    op.output_elems = [](int, const Dims& d) { return d[0] * d[1]; };
    op.bytes = [](const Dims& d) {
        return 4.0 * double(d[0] * d[2] + d[2] * d[1] + 2 * d[0] * d[1]);
    };
    op.flops = [](const Dims& d) { return 2.0 * double(d[0]) * double(d[1]) * double(d[2]); };
    // Float accumulation over K terms of magnitude ~1: error grows like K * eps at worst.
    op.tolerance = [](const Dims& d) {
        return Tolerance{1e-6 * double(std::max<std::int64_t>(d[2], 1)), 1e-4};
    };
    op.reference = reference::gemm_kernel;
    return op;
}

OpInfo make_rms_norm() {
    OpInfo op;
    op.name = kRmsNorm;
    op.dim_names = {"B", "D"};
    op.inputs = {"x", "w"};
    op.outputs = {"y"};
    op.scalar_names = {"eps"};
    op.default_scalars = {1e-6, 0, 0, 0};
    op.input_elems = [](int slot, const Dims& d) { return slot == 0 ? d[0] * d[1] : d[1]; };
    op.output_elems = [](int, const Dims& d) { return d[0] * d[1]; };
    op.bytes = [](const Dims& d) { return 8.0 * double(d[0] * d[1]) + 4.0 * double(d[1]); };
    op.flops = [](const Dims& d) { return 4.0 * double(d[0] * d[1]); };
    op.tolerance = [](const Dims&) { return Tolerance{1e-6, 1e-5}; };
    op.reference = reference::rms_norm_kernel;
    return op;
}

// parse_count's answer for a well-formed number above the per-dimension limit.
constexpr std::int64_t kCountTooLarge = -1;

// A positive count with an optional K/M/G suffix, at most 2^31; kCountTooLarge above that.
std::optional<std::int64_t> parse_count(std::string_view t) {
    if (t.empty())
        return std::nullopt;
    std::int64_t mult = 1;
    const char last = t.back();
    if (last == 'K' || last == 'k')
        mult = 1024;
    else if (last == 'M' || last == 'm')
        mult = 1024 * 1024;
    else if (last == 'G' || last == 'g')
        mult = 1024LL * 1024 * 1024;
    if (mult != 1)
        t.remove_suffix(1);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc::result_out_of_range)
        return kCountTooLarge;
    if (ec != std::errc{} || p != t.data() + t.size() || v <= 0)
        return std::nullopt;
    if (v > (std::int64_t(1) << 31) / mult)
        return kCountTooLarge;
    return v * mult;
}

} // namespace

const std::vector<OpInfo>& ops() {
    static const std::vector<OpInfo> all = {make_flow_match(), make_flow_sde(), make_gemm(),
                                            make_rms_norm()};
    return all;
}

const OpInfo* find_op(std::string_view name) {
    for (const auto& op : ops())
        if (op.name == name)
            return &op;
    return nullptr;
}

std::vector<Dims> default_sizes(const OpInfo& op, std::int64_t llc_bytes) {
    // Working sets: 32 KiB (L1), 512 KiB (L2), 8 MiB (LLC), and well past the LLC.
    const double big = std::max<double>(64.0 * 1024 * 1024, 4.0 * double(llc_bytes));
    const std::vector<double> targets = {32.0 * 1024, 512.0 * 1024, 8.0 * 1024 * 1024, big};
    std::vector<Dims> out;
    if (op.name == kGemm) {
        for (std::int64_t n : {32, 128, 512, 1024})
            out.push_back({n, n, n});
        return out;
    }
    const double per_elem = op.bytes(op.rank() == 1 ? Dims{1, 0, 0} : Dims{1, 1024, 0}) /
                            (op.rank() == 1 ? 1.0 : 1024.0);
    for (double t : targets) {
        auto elems = static_cast<std::int64_t>(t / per_elem);
        if (op.rank() == 1)
            out.push_back({elems, 0, 0});
        else
            out.push_back({std::max<std::int64_t>(1, elems / 1024), 1024, 0});
    }
    return out;
}

std::string dims_to_string(const OpInfo& op, const Dims& dims) {
    std::string s;
    for (std::size_t i = 0; i < op.rank(); ++i) {
        if (i)
            s += 'x';
        s += std::to_string(dims[i]);
    }
    return s;
}

std::optional<Dims> parse_dims(const OpInfo& op, std::string_view text, std::string* error) {
    auto fail = [&](std::string why) -> std::optional<Dims> {
        if (error)
            *error =
                "invalid size '" + std::string(text) + "' for " + std::string(op.name) + ": " + why;
        return std::nullopt;
    };
    std::vector<std::int64_t> parts;
    std::size_t start = 0;
    while (true) {
        auto x = text.find('x', start);
        auto part =
            text.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start);
        if (part.empty())
            return fail(text.empty() ? std::string("the size is empty")
                        : start == 0 ? std::string("nothing before the first 'x'")
                        : x == std::string_view::npos
                            ? std::string("nothing after the last 'x'")
                            : std::string("two 'x' with nothing between them"));
        auto v = parse_count(part);
        if (v == kCountTooLarge)
            return fail("'" + std::string(part) +
                        "' is larger than the limit of 2147483648 (2G) per dimension");
        if (!v)
            return fail("expected a positive integer (optional K/M/G suffix), got '" +
                        std::string(part) + "'");
        parts.push_back(*v);
        if (x == std::string_view::npos)
            break;
        start = x + 1;
    }
    Dims d{0, 0, 0};
    if (parts.size() == op.rank()) {
        for (std::size_t i = 0; i < parts.size(); ++i)
            d[i] = parts[i];
    } else if (parts.size() == 1) {
        const auto n = parts[0];
        if (op.rank() == 2)
            d = n >= 1024 ? Dims{(n + 1023) / 1024, 1024, 0} : Dims{1, n, 0};
        else if (op.rank() == 3)
            d = {n, n, n};
    } else {
        std::string shape;
        for (auto n : op.dim_names)
            shape += (shape.empty() ? "" : "x") + std::string(n);
        return fail("expected " + shape + " or a single number");
    }
    // Keep every buffer addressable and below 16 Gi elements.
    for (int s = 0; s < int(op.inputs.size()); ++s)
        if (op.input_elems(s, d) > (std::int64_t(1) << 34))
            return fail("input " + std::string(op.inputs[std::size_t(s)]) +
                        " would have more than 2^34 elements");
    for (int s = 0; s < int(op.outputs.size()); ++s)
        if (op.output_elems(s, d) > (std::int64_t(1) << 34))
            return fail("output " + std::string(op.outputs[std::size_t(s)]) +
                        " would have more than 2^34 elements");
    return d;
}

} // namespace switchyard

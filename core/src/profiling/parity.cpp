// SPDX-License-Identifier: MIT
#include <switchyard/profiling/parity.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace switchyard {

ParityResult check_parity(const OpInfo& op, const Dims& dims,
                          const std::vector<std::vector<float>>& got,
                          const std::vector<std::vector<float>>& ref) {
    ParityResult r;
    r.checked = true;
    r.tolerance = op.tolerance(dims);
    auto fail_once = [&](std::string what) {
        if (r.first_failure.empty())
            r.first_failure = std::move(what);
    };
    if (got.size() != op.outputs.size() || ref.size() != op.outputs.size()) {
        fail_once("wrong number of outputs");
        r.pass = false;
        return r;
    }
    for (std::size_t s = 0; s < op.outputs.size(); ++s) {
        const auto expected = std::size_t(op.output_elems(int(s), dims));
        const auto& g = got[s];
        const auto& e = ref[s];
        if (g.size() != expected || e.size() != expected) {
            fail_once(std::string(op.outputs[s]) + ": " + std::to_string(g.size()) + " elements, expected " +
                      std::to_string(expected));
            ++r.mismatches;
            continue;
        }
        double scale = 1.0;
        for (float v : e)
            if (std::isfinite(v))
                scale = std::max(scale, double(std::fabs(v)));
        const double atol = r.tolerance.atol * scale;
        for (std::size_t i = 0; i < expected; ++i) {
            ++r.elements;
            const double gv = g[i], ev = e[i];
            auto describe = [&] {
                std::ostringstream os;
                os.precision(9);
                os << op.outputs[s] << "[" << i << "]: got " << gv << ", expected " << ev;
                return os.str();
            };
            if (!std::isfinite(gv)) {
                ++r.non_finite;
                ++r.mismatches;
                fail_once(describe());
                continue;
            }
            if (!std::isfinite(ev)) {
                // The reference itself overflowed: nothing finite can match it.
                ++r.mismatches;
                fail_once(describe() + " (reference not finite)");
                continue;
            }
            const double diff = std::fabs(gv - ev);
            r.max_abs_error = std::max(r.max_abs_error, diff);
            if (ev != 0.0)
                r.max_rel_error = std::max(r.max_rel_error, diff / std::fabs(ev));
            if (!(diff <= atol + r.tolerance.rtol * std::fabs(ev))) {
                ++r.mismatches;
                fail_once(describe());
            }
        }
    }
    r.pass = r.mismatches == 0 && r.non_finite == 0;
    return r;
}

nlohmann::json ParityResult::to_json() const {
    nlohmann::json j = {{"verdict", verdict()}};
    if (!checked)
        return j;
    j["max_abs_error"] = max_abs_error;
    j["max_rel_error"] = max_rel_error;
    j["atol"] = tolerance.atol;
    j["rtol"] = tolerance.rtol;
    j["mismatches"] = mismatches;
    j["non_finite"] = non_finite;
    j["elements"] = elements;
    if (!first_failure.empty())
        j["first_failure"] = first_failure;
    return j;
}

ParityResult ParityResult::from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw std::runtime_error("parity: expected an object");
    ParityResult r;
    auto num = [&](const char* key, double def) {
        if (!j.contains(key))
            return def;
        if (!j[key].is_number())
            throw std::runtime_error(std::string("parity.") + key + ": expected a number");
        return j[key].get<double>();
    };
    if (!j.contains("verdict") || !j["verdict"].is_string())
        throw std::runtime_error("parity.verdict: expected a string");
    const auto v = j["verdict"].get<std::string>();
    if (v != "PASS" && v != "FAIL" && v != "NOT_CHECKED")
        throw std::runtime_error("parity.verdict: expected PASS, FAIL or NOT_CHECKED, got '" + v + "'");
    r.checked = v != "NOT_CHECKED";
    r.pass = v == "PASS";
    r.max_abs_error = num("max_abs_error", 0);
    r.max_rel_error = num("max_rel_error", 0);
    r.tolerance.atol = num("atol", 0);
    r.tolerance.rtol = num("rtol", 0);
    auto count = [&](const char* key) {
        const double v = num(key, 0);
        if (!(v >= 0 && v <= 9.0e15))
            throw std::runtime_error(std::string("parity.") + key + ": out of range");
        return std::int64_t(v);
    };
    r.mismatches = count("mismatches");
    r.non_finite = count("non_finite");
    r.elements = count("elements");
    if (j.contains("first_failure")) {
        if (!j["first_failure"].is_string())
            throw std::runtime_error("parity.first_failure: expected a string");
        r.first_failure = j["first_failure"].get<std::string>();
    }
    return r;
}

} // namespace switchyard

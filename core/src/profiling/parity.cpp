// SPDX-License-Identifier: MIT
#include <switchyard/profiling/parity.h>

#include "util/jsonread.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace switchyard {

ParityResult check_parity(const OpInfo& op, const Dims& dims,
                          const std::vector<std::vector<float>>& got,
                          const std::vector<std::vector<float>>& ref) {
    return check_parity(op, dims, got, ref, op.tolerance(dims));
}

ParityResult check_parity(const OpInfo& op, const Dims& dims,
                          const std::vector<std::vector<float>>& got,
                          const std::vector<std::vector<float>>& ref, const Tolerance& tolerance) {
    ParityResult r;
    r.checked = true;
    r.tolerance = tolerance;
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
            fail_once(std::string(op.outputs[s]) + ": " + std::to_string(g.size()) +
                      " elements, expected " + std::to_string(expected));
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

void to_json(nlohmann::json& j, const ParityResult& p) {
    j = {{"verdict", p.verdict()}};
    if (!p.checked)
        return;
    j["max_abs_error"] = p.max_abs_error;
    j["max_rel_error"] = p.max_rel_error;
    j["atol"] = p.tolerance.atol;
    j["rtol"] = p.tolerance.rtol;
    j["mismatches"] = p.mismatches;
    j["non_finite"] = p.non_finite;
    j["elements"] = p.elements;
    if (!p.first_failure.empty())
        j["first_failure"] = p.first_failure;
    if (!p.violations.empty())
        j["violations"] = p.violations;
}

void from_json(const nlohmann::json& j, ParityResult& r) {
    const jsonread::Value v(j, "parity");
    v.expect(jsonread::Kind::Object);
    const auto verdict = v.at("verdict").str();
    if (verdict != "PASS" && verdict != "FAIL" && verdict != "NOT_CHECKED")
        v.at("verdict").fail("expected PASS, FAIL or NOT_CHECKED, got '" + verdict + "'");
    r = ParityResult{};
    r.checked = verdict != "NOT_CHECKED";
    r.pass = verdict == "PASS";
    r.max_abs_error = v.num("max_abs_error", 0.0);
    r.max_rel_error = v.num("max_rel_error", 0.0);
    r.tolerance.atol = v.num("atol", 0.0);
    r.tolerance.rtol = v.num("rtol", 0.0);
    constexpr std::int64_t kMaxCount = std::int64_t(9e15);
    r.mismatches = v.integer("mismatches", 0, 0, kMaxCount);
    r.non_finite = v.integer("non_finite", 0, 0, kMaxCount);
    r.elements = v.integer("elements", 0, 0, kMaxCount);
    r.first_failure = v.str("first_failure", std::string());
    if (const auto violations = v.find("violations")) {
        violations->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < violations->size(); ++i)
            r.violations.push_back((*violations)[i].str());
    }
}

nlohmann::json ParityResult::to_json() const {
    return *this;
}

ParityResult ParityResult::from_json(const nlohmann::json& j) {
    return j.get<ParityResult>();
}

} // namespace switchyard

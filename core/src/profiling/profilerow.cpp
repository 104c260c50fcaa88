// SPDX-License-Identifier: MIT
#include <switchyard/profiling/profilerow.h>

#include "util/jsonread.h"

namespace switchyard {

std::string RowSpec::label() const {
    return op + " " + size + " " + device + " " + arch + "/" + variant;
}

nlohmann::json RowSpec::to_json() const {
    nlohmann::json j = {{"index", index},
                        {"op", op},
                        {"size", size},
                        {"dims", {dims[0], dims[1], dims[2]}},
                        {"device", device},
                        {"device_kind", device_kind},
                        {"arch", arch},
                        {"variant", variant},
                        {"backend", backend},
                        {"source", source},
                        {"workspace_bytes", workspace_bytes}};
    if (!resolved_for.empty())
        j["resolved_for"] = resolved_for;
    return j;
}

RowSpec RowSpec::from_json(const nlohmann::json& j) {
    using namespace jsonread;
    const std::string p = "row";
    if (!j.is_object())
        fail(p, "expected an object");
    RowSpec r;
    r.index = integer(j, "index", p, 0);
    r.op = str(j, "op", p);
    r.size = str(j, "size", p);
    if (const auto* d = find(j, "dims")) {
        if (!d->is_array() || d->size() != 3)
            fail(p + ".dims", "expected an array of 3 integers");
        for (std::size_t i = 0; i < 3; ++i) {
            const auto& v = (*d)[i];
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
                fail(p + ".dims[" + std::to_string(i) + "]", "expected a non-negative integer");
            r.dims[i] = v.get<std::int64_t>();
        }
    }
    r.device = str(j, "device", p);
    r.device_kind = str(j, "device_kind", p, r.device.substr(0, r.device.find(':')));
    r.arch = str(j, "arch", p);
    r.variant = str(j, "variant", p);
    r.backend = str(j, "backend", p, std::string());
    r.source = str(j, "source", p, std::string());
    r.resolved_for = str(j, "resolved_for", p, std::string());
    r.workspace_bytes = integer(j, "workspace_bytes", p, 0);
    return r;
}

std::string ProfileRow::key() const {
    return spec.op + "|" + spec.size + "|" + spec.backend + "|" + spec.device + "|" + spec.arch + "|" + spec.variant;
}

nlohmann::json ProfileRow::to_json() const {
    nlohmann::json j = spec.to_json();
    j["status"] = status;
    if (!reason.empty())
        j["reason"] = reason;
    j["timer"] = timer;
    j["launches_per_sample"] = launches_per_sample;
    j["stop_reason"] = stop_reason;
    j["stats"] = stats.to_json();
    j["samples"] = samples;
    j["bytes"] = bytes;
    j["flops"] = flops;
    j["gbps"] = gbps;
    j["gflops"] = gflops;
    j["peak_bandwidth_gbs"] = peak_bandwidth_gbs;
    j["bandwidth_fraction"] = bandwidth_fraction;
    j["peak_gflops"] = peak_gflops;
    j["flops_fraction"] = flops_fraction;
    j["parity"] = parity.to_json();
    j["warnings"] = warnings;
    return j;
}

ProfileRow ProfileRow::from_json(const nlohmann::json& j) {
    using namespace jsonread;
    const std::string p = "row";
    ProfileRow r;
    r.spec = RowSpec::from_json(j);
    r.status = str(j, "status", p);
    static const char* const known[] = {"ok", "fail", "error", "crashed", "timed_out"};
    if (std::find(std::begin(known), std::end(known), r.status) == std::end(known))
        fail(p + ".status", "unknown status '" + r.status + "'");
    r.reason = str(j, "reason", p, std::string());
    r.timer = str(j, "timer", p, std::string("host"));
    r.launches_per_sample = integer(j, "launches_per_sample", p, 1);
    r.stop_reason = str(j, "stop_reason", p, std::string());
    if (const auto* s = find(j, "stats"))
        r.stats = SampleStats::from_json(*s);
    if (const auto* s = find(j, "samples")) {
        if (!s->is_array())
            fail(p + ".samples", "expected an array of numbers");
        r.samples.reserve(s->size());
        for (std::size_t i = 0; i < s->size(); ++i) {
            const auto& v = (*s)[i];
            if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
                fail(p + ".samples[" + std::to_string(i) + "]", "expected a non-negative number");
            r.samples.push_back(v.get<double>());
        }
    }
    r.bytes = num(j, "bytes", p, 0.0);
    r.flops = num(j, "flops", p, 0.0);
    r.gbps = num(j, "gbps", p, 0.0);
    r.gflops = num(j, "gflops", p, 0.0);
    r.peak_bandwidth_gbs = num(j, "peak_bandwidth_gbs", p, 0.0);
    r.bandwidth_fraction = num(j, "bandwidth_fraction", p, 0.0);
    r.peak_gflops = num(j, "peak_gflops", p, 0.0);
    r.flops_fraction = num(j, "flops_fraction", p, 0.0);
    if (const auto* par = find(j, "parity"))
        r.parity = ParityResult::from_json(*par);
    r.warnings = strings(j, "warnings", p);
    return r;
}

} // namespace switchyard

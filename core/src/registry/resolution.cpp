// SPDX-License-Identifier: MIT
#include <switchyard/registry/resolution.h>

#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/registry/suggest.h>

#include "util/difflib.h"
#include "util/jsonread.h"
#include "util/textutil.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace switchyard {

Resolution resolution_from_json(const nlohmann::json& j) {
    const jsonread::Value v(j);
    Resolution r;
    r.op = v.str("op");
    const auto target = v.at("target");
    r.target.device = target.str("device");
    r.target.arch = target.str("arch", std::string());
    r.variant = v.str("variant");
    const auto rungs = v.at("rungs").expect(jsonread::Kind::Array);
    for (std::size_t i = 0; i < rungs.size(); ++i) {
        const auto rung = rungs[i];
        ResolutionRung out;
        out.key =
            TupleKey({rung.str("op"), rung.str("device"), rung.str("arch"), rung.str("variant")});
        out.declared = rung.boolean("declared");
        out.available = rung.boolean("available");
        out.backend = rung.str("backend", std::string());
        out.why_not = rung.str("why_not", std::string());
        if (rung.boolean("winner", false))
            r.winner = i;
        if (out.declared && !r.first_declared)
            r.first_declared = i;
        r.rungs.push_back(std::move(out));
    }
    return r;
}

std::vector<std::string> known_ops(BackendRegistry& registry) {
    registry.ensure_initialized();
    std::set<std::string> ops;
    for (const auto& row : registry.kernel_registry().manifest())
        ops.insert(row.cell->key[0]);
    return {ops.begin(), ops.end()};
}

std::vector<std::string> known_variants(BackendRegistry& registry,
                                        const std::vector<std::string>& ops) {
    registry.ensure_initialized();
    std::set<std::string> variants;
    for (const auto& row : registry.kernel_registry().manifest())
        if (ops.empty() || std::find(ops.begin(), ops.end(), row.cell->key[0]) != ops.end())
            variants.insert(row.cell->key[3]);
    return {variants.begin(), variants.end()};
}

void check_variant(BackendRegistry& registry, const std::vector<std::string>& ops,
                   std::string_view variant) {
    if (variant == "default")
        return;
    const auto known = known_variants(registry, ops);
    if (std::find(known.begin(), known.end(), variant) != known.end())
        return;
    throw std::invalid_argument(unknown_name("variant", variant, known, false) + " (variants" +
                                (ops.empty() ? std::string() : " of " + text::join(ops)) + ": " +
                                text::join(known) + ")");
}

Resolution resolve_kernel(BackendRegistry& registry, std::string_view op, const Target& target,
                          std::string_view variant) {
    const auto ops = known_ops(registry);
    if (std::find(ops.begin(), ops.end(), op) != ops.end())
        check_variant(registry, {std::string(op)}, variant);
    return resolve_kernel(registry, op, target, variant, ops);
}

Resolution resolve_kernel(BackendRegistry& registry, std::string_view op, const Target& target,
                          std::string_view variant, const std::vector<std::string>& ops) {
    registry.ensure_initialized();
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
        std::string message = "unknown op '" + std::string(op) + "'";
        const auto suggestions = difflib::get_close_matches(op, ops, 2, 0.6);
        if (!suggestions.empty()) {
            message += ", did you mean: " + text::join(suggestions, ", ", text::quoted) + "?";
        }
        throw std::invalid_argument(message + " Known ops: " + text::join(ops) + ".");
    }

    Resolution r;
    r.op = std::string(op);
    r.target = target;
    r.variant = std::string(variant);
    const auto chain = fallback_chain(op, target, variant);
    auto& kernels = registry.kernel_registry();
    r.cell = kernels.resolve_first(chain);

    for (std::size_t i = 0; i < chain.size(); ++i) {
        ResolutionRung rung;
        rung.key = chain[i];
        auto cell = kernels.lookup(chain[i]);
        if (!cell) {
            rung.why_not = "no backend declares this cell";
            r.rungs.push_back(std::move(rung));
            continue;
        }
        rung.declared = true;
        rung.backend = cell->backend;
        if (!r.first_declared)
            r.first_declared = i;
        rung.available = cell->is_available() && cell->is_loaded();
        if (r.cell && cell.get() == r.cell.get() && !r.winner)
            r.winner = i;
        if (!rung.available) {
            std::string reason;
            try {
                const auto info = registry.info(cell->backend);
                // One line (a table cell): the cause's summary, else the message's first line.
                if (!info.is_available()) {
                    const auto why = explain(info);
                    const auto first = info.error.substr(0, info.error.find('\n'));
                    reason = "backend '" + info.name + "' is " +
                             std::string(to_string(info.state)) + ": " +
                             (why.summary.empty() ? first : why.summary);
                }
            } catch (const std::exception&) {
            }
            if (const Value* needs = cell->meta.find("requires");
                reason.empty() && needs && needs->is_text())
                reason = "needs " + needs->as_text() + ", which this machine lacks";
            if (reason.empty())
                reason = cell->is_loaded() ? "its availability check says no on this machine"
                                           : "backend '" + cell->backend + "' has not loaded";
            rung.why_not = reason;
        }
        r.rungs.push_back(std::move(rung));
    }
    return r;
}

nlohmann::json to_json(const Resolution& r) {
    nlohmann::json j;
    j["op"] = r.op;
    j["target"] = {{"device", r.target.device}, {"arch", r.target.arch}};
    j["variant"] = r.variant;
    auto rungs = nlohmann::json::array();
    for (std::size_t i = 0; i < r.rungs.size(); ++i) {
        const auto& rung = r.rungs[i];
        rungs.push_back({{"op", rung.key[0]},
                         {"device", rung.key[1]},
                         {"arch", rung.key[2]},
                         {"variant", rung.key[3]},
                         {"declared", rung.declared},
                         {"available", rung.available},
                         {"backend", rung.backend},
                         {"why_not", rung.why_not},
                         {"winner", r.winner && *r.winner == i}});
    }
    j["rungs"] = std::move(rungs);
    if (r.winner) {
        const auto& w = r.rungs[*r.winner];
        j["winner"] = {{"op", w.key[0]},
                       {"device", w.key[1]},
                       {"arch", w.key[2]},
                       {"variant", w.key[3]},
                       {"backend", w.backend}};
    } else {
        j["winner"] = nullptr;
    }
    if (r.first_declared) {
        const auto& d = r.rungs[*r.first_declared];
        j["first_declared"] = {{"op", d.key[0]},
                               {"device", d.key[1]},
                               {"arch", d.key[2]},
                               {"variant", d.key[3]},
                               {"backend", d.backend}};
    } else {
        j["first_declared"] = nullptr;
    }
    return j;
}

} // namespace switchyard

// SPDX-License-Identifier: MIT
#include <switchyard/sdk/tunedresolve.h>

#include <atomic>
#include <exception>

namespace switchyard {

namespace {
std::atomic<detail::TunedResolver> g_resolver{nullptr};
} // namespace

void detail::set_tuned_resolver(TunedResolver resolver) noexcept {
    g_resolver.store(resolver, std::memory_order_release);
}

TunedResolveResult resolve_tuned(const TunedResolveRequest& request) {
    TunedResolveResult out;
    if (request.version != kTunedResolveVersion) {
        out.error = "tuned resolution revision " + std::to_string(request.version) +
                    " is not this core's (" + std::to_string(kTunedResolveVersion) +
                    "): rebuild against this Switchyard";
        return out;
    }
    const auto resolver = g_resolver.load(std::memory_order_acquire);
    if (!resolver) {
        out.error = "this core was built without its runtime module";
        return out;
    }
    try {
        return resolver(request);
    } catch (const std::exception& e) {
        out.error = e.what();
    } catch (...) {
        out.error = "unknown error";
    }
    return out;
}

} // namespace switchyard

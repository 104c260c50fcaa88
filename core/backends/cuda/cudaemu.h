// SPDX-License-Identifier: MIT
#pragma once

// A host-side stand-in for the CUDA built-ins the kernels in elementwise.cuh and gemm.cuh
// use, so that a machine without a GPU can still run them and check their indexing,
// tiling, edge handling and reductions against the CPU reference (tests/core/tst_cuda.cpp).
// Each thread of a block is a fiber (ucontext); __syncthreads() parks it until every live
// thread of the block arrives, __shfl_xor_sync() until every lane of its warp does.
// __shared__ becomes `static`: blocks run one after another. Timing means nothing here.
//
// Include this before the .cuh files, and never in a TU that nvcc compiles.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(16) float4 {
    float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) {
    return {x, y, z, w};
}
inline float rsqrtf(float x) {
    return 1.0f / std::sqrt(x);
}

inline dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace cudaemu {

enum class Wait { None, Block, Warp, Done };

struct Fiber {
    ucontext_t context{};
    std::unique_ptr<char[]> stack;
    Wait wait = Wait::None;
    float lane_value = 0;
};

struct Block {
    std::vector<Fiber> fibers;
    ucontext_t scheduler{};
    unsigned current = 0;
    std::function<void()> body;
};

inline Block*& current_block() {
    static Block* block = nullptr;
    return block;
}

inline void park(Wait why) {
    Block& b = *current_block();
    Fiber& f = b.fibers[b.current];
    f.wait = why;
    swapcontext(&f.context, &b.scheduler);
}

inline void fiber_entry() {
    current_block()->body();
    park(Wait::Done);
}

inline unsigned linear(const dim3& t, const dim3& d) {
    return t.x + d.x * (t.y + d.y * t.z);
}
inline dim3 unlinear(unsigned i, const dim3& d) {
    return dim3(i % d.x, (i / d.x) % d.y, i / (d.x * d.y));
}

/// Runs `kernel` (a call of a __global__ function) over grid x block, block by block.
inline void launch(dim3 grid, dim3 block, const std::function<void()>& kernel) {
    constexpr std::size_t kStack = 64 * 1024;
    const unsigned threads = block.x * block.y * block.z;
    Block b;
    b.body = kernel;
    b.fibers.resize(threads);
    for (auto& f : b.fibers)
        f.stack.reset(new char[kStack]); // not zeroed
    current_block() = &b;
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                blockIdx = dim3(bx, by, bz);
                for (auto& f : b.fibers) {
                    getcontext(&f.context);
                    f.context.uc_stack.ss_sp = f.stack.get();
                    f.context.uc_stack.ss_size = kStack;
                    f.context.uc_link = nullptr;
                    makecontext(&f.context, fiber_entry, 0);
                    f.wait = Wait::None;
                }
                while (true) {
                    bool ran = false;
                    for (unsigned i = 0; i < threads; ++i) {
                        if (b.fibers[i].wait != Wait::None)
                            continue;
                        b.current = i;
                        threadIdx = unlinear(i, block);
                        swapcontext(&b.scheduler, &b.fibers[i].context);
                        ran = true;
                    }
                    if (ran)
                        continue;
                    // Everyone is parked: release a complete warp barrier, else the block barrier.
                    bool released = false;
                    for (unsigned w = 0; w < threads; w += 32) {
                        const unsigned end = std::min(threads, w + 32);
                        bool all = true, any = false;
                        for (unsigned i = w; i < end; ++i) {
                            all = all && (b.fibers[i].wait == Wait::Warp ||
                                          b.fibers[i].wait == Wait::Done);
                            any = any || b.fibers[i].wait == Wait::Warp;
                        }
                        if (all && any) {
                            for (unsigned i = w; i < end; ++i)
                                if (b.fibers[i].wait == Wait::Warp)
                                    b.fibers[i].wait = Wait::None;
                            released = true;
                        }
                    }
                    if (released)
                        continue;
                    bool any_block = false, all_block = true;
                    for (auto& f : b.fibers) {
                        any_block = any_block || f.wait == Wait::Block;
                        all_block = all_block && (f.wait == Wait::Block || f.wait == Wait::Done);
                    }
                    if (!any_block)
                        break; // every thread finished
                    if (!all_block)
                        throw std::logic_error(
                            "cudaemu: a warp waits on a shuffle its other lanes never reach");
                    for (auto& f : b.fibers)
                        if (f.wait == Wait::Block)
                            f.wait = Wait::None;
                }
            }
    current_block() = nullptr;
}

} // namespace cudaemu

inline void __syncthreads() {
    cudaemu::park(cudaemu::Wait::Block);
}

inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
    auto& b = *cudaemu::current_block();
    const unsigned me = b.current;
    b.fibers[me].lane_value = v;
    cudaemu::park(cudaemu::Wait::Warp); // every lane has published its value
    const float other = b.fibers[(me & ~31u) | ((me & 31u) ^ unsigned(lane_mask))].lane_value;
    cudaemu::park(cudaemu::Wait::Warp); // every lane has read before the next shuffle writes
    return other;
}

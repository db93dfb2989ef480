// A fixed pool of worker threads that run the tasks of one parallel job at a time. The calling thread takes part, so a
// pool of N threads starts N - 1 workers. Workers spin briefly after a job (the next kernel of a decode step follows
// within microseconds), then sleep on a condition variable. Tasks are claimed in shrinking runs (claimSize). Nothing is
// allocated per job.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace laneway {

inline void cpuRelax() {
#if defined(__x86_64__)
    _mm_pause();
#endif
}

class Pool {
public:
    // Tasks of one job are claimed from `next_`, which packs the job's epoch (high 32 bits), its task count (16 bits) and
    // the next task index (16 bits): a worker that wakes late for an old job can never claim a task of a newer one.
    static constexpr int kMaxTasks = 0xffff;

    explicit Pool(int threads) : threads_(threads < 1 ? 1 : threads) {
        for (int i = 1; i < threads_; i++) {
            workers_.emplace_back([this] { workerLoop(0); });  // epoch 0 seen: a pool closed at once still stops
        }
    }

    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(sleepLock_);
            stop_.store(true);
            epoch_.fetch_add(1);
        }
        wake_.notify_all();
        for (auto& w : workers_) w.join();
    }

    int threads() const { return threads_; }

    // Calls f(task) for every task in [0, tasks), spread over the pool, and returns when all are done. A second caller
    // arriving while a job runs does its work on its own thread rather than wait.
    template <class F>
    void run(int tasks, F&& f) {
        if (tasks <= 0) return;
        if (tasks == 1 || workers_.empty() || tasks > kMaxTasks || !busy_.try_lock()) {
            for (int t = 0; t < tasks; t++) f(t);
            return;
        }
        using Fn = std::remove_reference_t<F>;
        fn_.store(+[](void* ctx, int t) { (*static_cast<Fn*>(ctx))(t); }, std::memory_order_relaxed);
        ctx_.store(static_cast<void*>(&f), std::memory_order_relaxed);
        done_.store(0, std::memory_order_relaxed);
        uint32_t e = epoch_.load(std::memory_order_relaxed) + 1;
        next_.store((uint64_t)e << 32 | (uint64_t)tasks << 16, std::memory_order_release);
        epoch_.store(e, std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) > 0) {
            std::lock_guard<std::mutex> lock(sleepLock_);
            wake_.notify_all();
        }
        work(e);
        // The last tasks are running on workers: wait, yielding the core after a few microseconds in case one of
        // them is waiting for it (a machine busier than the pool is sized for).
        for (int i = 0; done_.load(std::memory_order_acquire) < tasks; i++) {
            if (i < kPauses) cpuRelax();
            else std::this_thread::yield();
        }
        busy_.unlock();
    }

private:
    // Tasks taken by one claim when `left` are unclaimed: a share of them that shrinks as the job goes (large, then
    // single tasks at the end to even out the threads). A claim and its completion are atomic operations on lines
    // every thread writes; one per task cost a fifth of a small model's decode step (stories15M: the tasks of its
    // 288-row products take about a microsecond each), and consecutive tasks let each thread read one run of memory.
    uint32_t claimSize(uint32_t left) const {
        const uint32_t share = left / (2 * (uint32_t)threads_);
        return share > 0 ? share : 1;
    }

    // Claims and runs tasks of job `e` until none are left.
    void work(uint32_t e) {
        void (*fn)(void*, int) = fn_.load(std::memory_order_relaxed);
        void* ctx = ctx_.load(std::memory_order_relaxed);
        uint64_t v = next_.load(std::memory_order_acquire);
        for (;;) {
            if ((uint32_t)(v >> 32) != e) return;
            uint32_t tasks = (v >> 16) & 0xffff, index = v & 0xffff;
            if (index >= tasks) return;
            const uint32_t chunk = claimSize(tasks - index);
            if (!next_.compare_exchange_weak(v, v + chunk, std::memory_order_acq_rel)) continue;
            // A successful claim means job e is still running, so fn and ctx (read after seeing e) are its own.
            for (uint32_t k = 0; k < chunk; k++) fn(ctx, (int)(index + k));
            done_.fetch_add((int)chunk, std::memory_order_release);
            v = next_.load(std::memory_order_acquire);
        }
    }

    void workerLoop(uint32_t seen) {
        for (;;) {
            uint32_t e = awaitJob(seen);
            if (stop_.load()) return;
            seen = e;
            work(e);
        }
    }

    // Spins for a short while, then sleeps, until the epoch moves past `seen`.
    uint32_t awaitJob(uint32_t seen) {
        auto start = std::chrono::steady_clock::now();
        for (int i = 0;; i++) {
            uint32_t e = epoch_.load(std::memory_order_acquire);
            if (e != seen) return e;
            if (i < kPauses) {
                cpuRelax();
            } else {
                std::this_thread::yield();  // lets a busy machine run others, and costs little on an idle one
                if ((i & 15) == 15 && std::chrono::steady_clock::now() - start > kSpin) break;
            }
        }
        std::unique_lock<std::mutex> lock(sleepLock_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        wake_.wait(lock, [&] { return epoch_.load(std::memory_order_seq_cst) != seen || stop_.load(); });
        sleepers_.fetch_sub(1);
        return epoch_.load(std::memory_order_acquire);
    }

    static constexpr std::chrono::microseconds kSpin{200};
    static constexpr int kPauses = 2000;  // a few microseconds of pause instructions before yielding

    const int threads_;
    std::vector<std::thread> workers_;
    std::mutex busy_;
    std::atomic<void (*)(void*, int)> fn_{nullptr};
    std::atomic<void*> ctx_{nullptr};
    std::atomic<uint64_t> next_{0};
    std::atomic<int> done_{0};
    std::atomic<uint32_t> epoch_{0};
    std::atomic<bool> stop_{false};
    std::atomic<int> sleepers_{0};
    std::mutex sleepLock_;
    std::condition_variable wake_;
};

}  // namespace laneway

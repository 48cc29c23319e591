// A program with one defect that the sanitizer it is built with must
// report: a data race under ThreadSanitizer, a use after free under
// AddressSanitizer. rdma-in-guest.sh runs it before the RDMA tests, so a
// guest where the sanitizer cannot start, or whose reports go nowhere,
// fails the run instead of passing it unchecked.
#include <cstdio>
#include <thread>

// gcc names the sanitizer with a macro, clang with __has_feature.
#if defined(__SANITIZE_THREAD__)
#define CANARY_THREAD 1
#elif defined(__SANITIZE_ADDRESS__)
#define CANARY_ADDRESS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CANARY_THREAD 1
#elif __has_feature(address_sanitizer)
#define CANARY_ADDRESS 1
#endif
#endif

#if defined(CANARY_THREAD)
static int shared_counter;

int main() {
    std::thread other([] { shared_counter++; });
    shared_counter++;  // the race: no lock, no atomic, no join before it
    other.join();
    std::printf("%d\n", shared_counter);
    return 0;
}
#elif defined(CANARY_ADDRESS)
int main() {
    volatile int *value = new int(7);
    delete value;
    std::printf("%d\n", *value);  // read after free; volatile, so it stays
    return 0;
}
#else
#error "canary.cpp is built with -fsanitize=thread or -fsanitize=address"
#endif

#pragma once
// How far rftp follows a directory tree, local or remote (get -r, put -r,
// sync). Deeper than any real dataset and more entries than any real tree,
// yet a listing that loops (a directory link shown as a directory) cannot
// send rftp down forever. docs/cli.md names both bounds.
#include <cstddef>

namespace rftp::client {

inline constexpr int kMaxTreeDepth = 64;
inline constexpr std::size_t kMaxTreeEntries = 10'000'000;

}  // namespace rftp::client

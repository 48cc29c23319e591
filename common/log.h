// One line per event on stderr, in a shape journald keeps well: when stderr is
// the journal (systemd sets JOURNAL_STREAM), each line starts with the
// sd-daemon priority prefix "<N>" so journalctl -p filters work; on a terminal
// the prefix is left out. Fields are written as key=value so lines grep well.
#pragma once

#include <string>
#include <string_view>

namespace rftp::log {

enum class Level { error = 3, warning = 4, notice = 5, info = 6, debug = 7 };

void set_threshold(Level level);
Level threshold();
// Whether a line at level would be written: worth asking before building a
// costly one on a hot path.
inline bool enabled(Level level) { return static_cast<int>(level) <= static_cast<int>(threshold()); }
bool parse_level(std::string_view name, Level &out);

// Writes one line with a single write(2), so lines from threads never interleave.
void write(Level level, std::string_view line);

inline void error(std::string_view l) { write(Level::error, l); }
inline void warning(std::string_view l) { write(Level::warning, l); }
inline void notice(std::string_view l) { write(Level::notice, l); }
inline void info(std::string_view l) { write(Level::info, l); }
inline void debug(std::string_view l) { write(Level::debug, l); }

// The text with control bytes (other than tab), C1 controls and every byte
// that is not well-formed UTF-8 written as \xNN, for printing what a peer
// sent on a terminal or into the journal. write() applies it to every line.
std::string printable(std::string_view text);

// Quotes a value for a key=value field when it holds spaces, quotes, controls
// or bytes beyond ASCII (those that are no UTF-8 written as \xNN).
std::string quote(std::string_view value);

}  // namespace rftp::log

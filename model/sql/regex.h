// model/sql/regex.h: the POSIX regular expression match operators `~`, `~*`, `!~`, `!~*` for
// lockstep's SQL subset (Que's and migrations' CHECKs, names matched in queries).
//
// PostgreSQL's advanced regular expressions (AREs) are matched here by std::regex's ECMAScript
// grammar on the constructs where the two agree: literals and escaped punctuation, `.` (any
// character, a newline too, as the server's non-newline-sensitive default), bracket
// expressions with ranges and `[:class:]` names, `\d \D \s \S \w \W`, `^` and `$` (the text's
// ends), `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` (greedy or not: a match operator only asks
// whether one exists), `|` and groups (`(...)`, `(?:...)`). A pattern with another construct
// (back references, lookaround, embedded options, ARE-only escapes such as \m or \y, collating
// elements) or text or a pattern with non-ASCII characters is refused (0A000), never matched
// differently; so is a pattern the server would reject, whose message lockstep does not model.
#pragma once

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// text ~ pattern (`ignore_case`: ~*, ASCII letters only): whether the pattern matches some
// part of the text; NULL beside NULL.
Value regex_match(const Value& text, const Value& pattern, bool ignore_case);

}  // namespace lockstep::sql

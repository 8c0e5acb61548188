#include "lockstep/model/sql/spec.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "lockstep/model/env.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/sql/parse.h"

namespace lockstep::sql {
namespace {

struct Token {
  enum class Kind { end, word, quoted, sql, marker } kind = Kind::end;
  std::string text;
  int line = 1, column = 1;
};

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  [[noreturn]] void fail(int line, int column, std::string_view message) const {
    throw InputError(fmt::format("{}:{}:{}: {}", file_, line, column, message));
  }

  Token next() {
    const bool after_open_string = std::exchange(open_string_, false);
    skip_blanks();
    Token t;
    t.line = line_;
    t.column = column_;
    if (at_end()) return t;
    const char c = peek();
    if (c == '{') {
      advance();
      return block(t, '}', Token::Kind::sql, "SQL block");
    }
    if (c == '(') {
      advance();
      Token m = block(t, ')', Token::Kind::marker, "marker");
      m.text = "(" + m.text + ")";
      return m;
    }
    if (c == '"') {
      advance();
      t.kind = Token::Kind::quoted;
      while (!at_end() && peek() != '"') {
        if (peek() == '\n') fail(t.line, t.column, "a quoted name runs past the end of its line");
        t.text += advance();
      }
      if (at_end()) fail(t.line, t.column, "a quoted name is not closed");
      advance();
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Token::Kind::word;
      while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) t.text += advance();
      return t;
    }
    fail(t.line, t.column, fmt::format("unexpected character '{}'{}", c,
                                       after_open_string ? " (the SQL block before it ended at a '}' inside a string literal: "
                                                           "isolationtester ends a block at its first '}'; build the value "
                                                           "another way, e.g. jsonb_build_object())"
                                                         : ""));
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  char advance() {
    const char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    return c;
  }
  void skip_blanks() {
    while (!at_end()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else if (peek() == '#') {
        while (!at_end() && peek() != '\n') advance();
      } else {
        return;
      }
    }
  }
  // The text up to `close`, without its leading and trailing blanks; the token's place is
  // that of its first character.
  Token block(Token t, char close, Token::Kind kind, std::string_view what) {
    while (!at_end() && std::isspace(static_cast<unsigned char>(peek()))) advance();
    t.kind = kind;
    t.line = line_;
    t.column = column_;
    while (!at_end() && peek() != close) t.text += advance();
    if (at_end()) fail(t.line, t.column, fmt::format("a {} is not closed with '{}'", what, close));
    advance();
    while (!t.text.empty() && std::isspace(static_cast<unsigned char>(t.text.back()))) t.text.pop_back();
    open_string_ = kind == Token::Kind::sql && std::count(t.text.begin(), t.text.end(), '\'') % 2 != 0;
    return t;
  }

  std::string_view text_;
  const std::string& file_;
  std::size_t pos_ = 0;
  int line_ = 1, column_ = 1;
  bool open_string_ = false;  // the last SQL block has an odd number of quotes
};

class SpecReader {
 public:
  SpecReader(std::string_view text, const std::string& file, SqlText sql) : lexer_(text, file), file_(file), sql_(sql) { take(); }

  Spec read() {
    Spec spec;
    spec.file = file_;
    while (token_.kind != Token::Kind::end) {
      const Token head = expect_word();
      if (head.text == "setup") {
        if (!spec.sessions.empty()) lexer_.fail(head.line, head.column, "a setup block after the first session belongs in a session");
        spec.setup.push_back(sql_block(head));
      } else if (head.text == "teardown") {
        if (!spec.sessions.empty()) lexer_.fail(head.line, head.column, "a teardown block after the first session belongs in a session");
        spec.teardown.push_back(sql_block(head));
      } else if (head.text == "session") {
        if (spec.sessions.size() + 1 == static_cast<std::size_t>(kMaxActors)) session_at_ = head;  // the first one too many
        spec.sessions.push_back(session(spec));
      } else if (head.text == "permutation") {
        spec.permutations.push_back(permutation(spec, head));
      } else if (head.text == "check") {
        spec.checks.push_back(check(spec, head));
      } else if (head.text == "expect") {
        if (spec.expect) lexer_.fail(head.line, head.column, "a second expect");
        spec.expect = expectation(head);
        expect_at_ = head;
      } else if (head.text == "fault") {
        const Token f = name("a fault's name");
        if (std::find(spec.faults.begin(), spec.faults.end(), f.text) != spec.faults.end()) {
          lexer_.fail(f.line, f.column, fmt::format("a second fault {}", f.text));
        }
        spec.faults.push_back(f.text);
        spec.fault_lines.push_back(f.line);
      } else {
        lexer_.fail(head.line, head.column,
                    fmt::format("expected setup, teardown, session, permutation, check, expect or fault, got \"{}\"", head.text));
      }
    }
    if (spec.sessions.empty()) lexer_.fail(token_.line, token_.column, "a spec needs at least one session");
    if (spec.expect && spec.expect->verdict == Verdict::violation && spec.expect->violation &&
        std::none_of(spec.checks.begin(), spec.checks.end(), [&](const SpecCheck& c) { return c.name == *spec.expect->violation; })) {
      lexer_.fail(expect_at_.line, expect_at_.column, fmt::format("expect violation \"{}\": no check has that name", *spec.expect->violation));
    }
    // Each session is an actor of the scenario (and of lockstep isolation, with the driver).
    if (spec.sessions.size() + 1 > static_cast<std::size_t>(kMaxActors)) {
      lexer_.fail(session_at_.line, session_at_.column,
                  fmt::format("{} sessions; at most {} are supported (one actor each, and isolationtester's)", spec.sessions.size(), kMaxActors - 1));
    }
    return spec;
  }

 private:
  void take() { token_ = lexer_.next(); }

  Token expect_word() {
    if (token_.kind != Token::Kind::word) lexer_.fail(token_.line, token_.column, fmt::format("expected a keyword, got {}", describe(token_)));
    Token t = token_;
    take();
    return t;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::end: return "the end of the file";
      case Token::Kind::sql: return "a SQL block";
      case Token::Kind::marker: return fmt::format("\"{}\"", t.text);
      default: return fmt::format("\"{}\"", t.text);
    }
  }
  // A name: an identifier or a quoted string.
  Token name(std::string_view what) {
    if (token_.kind != Token::Kind::word && token_.kind != Token::Kind::quoted) {
      lexer_.fail(token_.line, token_.column, fmt::format("expected {}, got {}", what, describe(token_)));
    }
    Token t = token_;
    take();
    return t;
  }

  SqlBlock sql_block(const Token& owner) {
    if (token_.kind != Token::Kind::sql) {
      lexer_.fail(token_.line, token_.column, fmt::format("expected {{ SQL }} after {}, got {}", owner.text, describe(token_)));
    }
    const Token t = token_;
    take();
    SqlBlock b{t.text, {}, t.line};
    if (sql_ == SqlText::as_written) return b;
    try {
      b.statements = parse_sql(t.text);
    } catch (const SqlInputError& e) {
      // A step the server would answer with an error (FOR UPDATE with an aggregate, a grouping
      // error): that is its outcome when it runs, printed as isolationtester prints it. What
      // lockstep does not model, and a syntax error (a typo, most likely), stop the file here.
      // (A block of several statements stops it too: the server runs those before the failing one.)
      const std::string_view what = e.what();
      if (owner.text == "step" && what.find("lockstep's SQL subset") == std::string_view::npos && !what.starts_with("syntax error") &&
          statement_count(t.text) == 1) {
        return b;
      }
      // The error's position, counted in characters of the block, as a line and column of the file.
      const TextPlace at = place_in(t.text, e.position(), {t.line, t.column});
      std::string message = e.what();
      for (const char* where : {", at position ", ", at line "}) {  // the spec's own line and column say it
        if (const auto at = message.rfind(where); at != std::string::npos) message.resize(at);
      }
      lexer_.fail(at.line, at.column, fmt::format("{} (SQLSTATE {})", message, e.sqlstate()));
    }
    return b;
  }

  SpecSession session(const Spec& spec) {
    const Token n = name("a session name");
    for (const SpecSession& s : spec.sessions) {
      if (s.name == n.text) lexer_.fail(n.line, n.column, fmt::format("a second session named \"{}\"", n.text));
    }
    SpecSession s;
    s.name = n.text;
    while (token_.kind == Token::Kind::word && (token_.text == "setup" || token_.text == "step" || token_.text == "teardown")) {
      const Token head = expect_word();
      if (head.text == "setup") {
        if (!s.steps.empty()) lexer_.fail(head.line, head.column, "a session's setup comes before its steps");
        s.setup.push_back(sql_block(head));
      } else if (head.text == "teardown") {
        s.teardown.push_back(sql_block(head));
      } else {
        if (!s.teardown.empty()) lexer_.fail(head.line, head.column, "a step after the session's teardown");
        const Token step = name("a step name");
        if (spec.find_step(step.text) != nullptr || std::any_of(s.steps.begin(), s.steps.end(), [&](const SpecStep& x) {
              return x.name == step.text;
            })) {
          lexer_.fail(step.line, step.column, fmt::format("a second step named \"{}\"", step.text));
        }
        s.steps.push_back(SpecStep{step.text, sql_block(head)});
      }
    }
    if (s.steps.empty()) lexer_.fail(n.line, n.column, fmt::format("session \"{}\" has no steps", s.name));
    return s;
  }

  std::vector<PermutationStep> permutation(const Spec& spec, const Token& head) {
    std::vector<PermutationStep> steps;
    std::vector<Token> first_marker;  // per step: where its blockers are written
    // lockstep's own keywords (check, expect, fault) name a step where the spec has a step of
    // that name, as isolationtester, which has none of them, reads it.
    const auto step_word = [&] {
      return !is_top_keyword(token_.text) || (!is_isolationtester_keyword(token_.text) && spec.find_step(token_.text) != nullptr);
    };
    while (token_.kind == Token::Kind::quoted || (token_.kind == Token::Kind::word && step_word())) {
      const Token step = name("a step name");
      if (spec.find_step(step.text) == nullptr) lexer_.fail(step.line, step.column, fmt::format("no step is named \"{}\"", step.text));
      PermutationStep p{step.text, {}, {}};
      first_marker.push_back(token_.kind == Token::Kind::marker ? token_ : step);
      while (token_.kind == Token::Kind::marker) {
        p.markers.push_back(token_.text);
        read_blockers(spec, token_, p.blockers);
        take();
      }
      steps.push_back(std::move(p));
    }
    if (steps.empty()) lexer_.fail(head.line, head.column, "a permutation lists no steps");
    // isolationtester's checks of blockers: a step of this permutation, of another session
    // (a step waiting for its own session's later step would wait for good).
    for (std::size_t i = 0; i < steps.size(); ++i) {
      int session = -1;
      (void)spec.find_step(steps[i].step, &session);
      for (const Blocker& b : steps[i].blockers) {
        if (b.kind == Blocker::Kind::once) continue;
        const Token& at = first_marker[i];
        if (std::none_of(steps.begin(), steps.end(), [&](const PermutationStep& p) { return p.step == b.step; })) {
          lexer_.fail(at.line, at.column,
                      fmt::format("undefined blocking step \"{}\" referenced in permutation step \"{}\" (not in this permutation)", b.step,
                                  steps[i].step));
        }
        int blocker_session = -1;
        (void)spec.find_step(b.step, &blocker_session);
        if (blocker_session == session) {
          lexer_.fail(at.line, at.column, fmt::format("permutation step \"{}\" cannot block on its own session's step \"{}\"", steps[i].step, b.step));
        }
      }
    }
    return steps;
  }
  // isolationtester's blocker list: `*`, a step's name, or a step's name, `notices`, a
  // count; separated by commas.
  void read_blockers(const Spec& spec, const Token& marker, std::vector<Blocker>& out) const {
    const std::string inner = marker.text.substr(1, marker.text.size() - 2);
    std::istringstream items(inner);
    std::string item;
    while (std::getline(items, item, ',')) {
      std::istringstream words(item);
      std::vector<std::string> w;
      for (std::string x; words >> x;) w.push_back(x);
      for (std::string& x : w) {
        if (x.size() >= 2 && x.front() == '"' && x.back() == '"') x = x.substr(1, x.size() - 2);
      }
      if (w.size() == 1 && w[0] == "*") {
        out.push_back(Blocker{Blocker::Kind::once, "", 0});
        continue;
      }
      const bool notices = w.size() == 3 && w[1] == "notices" && !w[2].empty() &&
                           std::all_of(w[2].begin(), w[2].end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
      if (w.size() != 1 && !notices) {
        lexer_.fail(marker.line, marker.column,
                    fmt::format("a blocker is *, a step's name or \"STEP notices N\", got \"{}\"", item));
      }
      if (spec.find_step(w[0]) == nullptr) lexer_.fail(marker.line, marker.column, fmt::format("no step is named \"{}\"", w[0]));
      out.push_back(notices ? Blocker{Blocker::Kind::notices, w[0], std::stoi(w[2].substr(0, 9))} : Blocker{Blocker::Kind::other_step, w[0], 0});
    }
  }
  static bool is_isolationtester_keyword(std::string_view w) {
    return w == "setup" || w == "teardown" || w == "session" || w == "permutation";
  }
  static bool is_top_keyword(std::string_view w) {
    return w == "setup" || w == "teardown" || w == "session" || w == "permutation" || w == "check" || w == "expect" || w == "fault";
  }

  SpecCheck check(const Spec& spec, const Token& head) {
    const Token n = name("a check name");
    for (const SpecCheck& c : spec.checks) {
      if (c.name == n.text) lexer_.fail(n.line, n.column, fmt::format("a second check named \"{}\"", n.text));
    }
    SpecCheck c{n.text, sql_block(head)};
    if (sql_ == SqlText::as_written) return c;
    const auto& statements = c.sql.statements;
    const Select* select = statements.size() == 1 ? std::get_if<Select>(&statements[0].body) : nullptr;
    if (select == nullptr || select->targets.size() != 1 || select->targets[0].star) {
      lexer_.fail(c.sql.line, 1, fmt::format("check \"{}\" must be one SELECT of one boolean column", c.name));
    }
    return c;
  }

  Expectation expectation(const Token& head) {
    const Token v = expect_word();
    const auto verdict = verdict_from_name(v.text);
    if (!verdict) {
      std::string known;
      for (Verdict k : kAllVerdicts) known += fmt::format("{}{}", known.empty() ? "" : ", ", verdict_name(k));
      lexer_.fail(v.line, v.column, fmt::format("unknown verdict \"{}\" (expected one of: {})", v.text, known));
    }
    Expectation e{*verdict, std::nullopt};
    if (*verdict == Verdict::violation || *verdict == Verdict::liveness) {
      if (token_.kind == Token::Kind::quoted || (token_.kind == Token::Kind::word && !is_top_keyword(token_.text))) {
        e.violation = name("a check name").text;
      } else if (*verdict == Verdict::violation) {
        lexer_.fail(head.line, head.column, "expect violation names the check: expect violation \"NAME\"");
      }
    }
    return e;
  }

  Lexer lexer_;
  const std::string& file_;
  SqlText sql_;
  Token token_;
  Token expect_at_;   // the expect line's keyword
  Token session_at_;  // the first session past the actors' bound
};

}  // namespace

const SpecStep* Spec::find_step(std::string_view name, int* session) const {
  for (std::size_t s = 0; s < sessions.size(); ++s) {
    for (const SpecStep& step : sessions[s].steps) {
      if (step.name == name) {
        if (session != nullptr) *session = static_cast<int>(s);
        return &step;
      }
    }
  }
  return nullptr;
}

Spec parse_spec(std::string_view text, const std::string& file, SqlText sql) {
  // PostgreSQL takes UTF-8 (the server's encoding here): a bad byte is the spec's fault,
  // named where it is, before any part of the spec is read.
  if (const std::size_t bad = invalid_utf8(text); bad != std::string_view::npos) {
    int line = 1, column = 1;
    for (std::size_t i = 0; i < bad; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
        ++column;
      }
    }
    throw InputError(fmt::format("{}:{}:{}: invalid UTF-8 (byte 0x{:02X}): a spec is UTF-8 text", file, line, column,
                                 static_cast<unsigned char>(text[bad])));
  }
  return SpecReader(text, file, sql).read();
}

Spec load_spec(const std::string& path, SqlText sql) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > kMaxInputBytes) throw InputError(fmt::format("{}: larger than {} bytes", path, kMaxInputBytes));
  return parse_spec(text.str(), path, sql);
}

}  // namespace lockstep::sql

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "lockstep/model/sql/parse.h"
#include "lockstep/model/systems/script_program.h"

namespace lockstep::script {
namespace {


std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
  return v;
}

// Names seen so far and what they are, so one name cannot be both a variable and a lock.
class Names {
 public:
  explicit Names(Program& p) : p_(p) {}

  int var(const std::string& name, const JsonCursor& where) {
    if (lock_index_.count(name)) where.fail(fmt::format("\"{}\" is a mutex, not a variable", name));
    auto [it, inserted] = var_index_.emplace(name, static_cast<int>(p_.vars.size()));
    if (inserted) {
      p_.vars.push_back(name);
      p_.initial.push_back(0);
    }
    return it->second;
  }

  int lock(const std::string& name, bool reader_writer, const JsonCursor& where) {
    if (var_index_.count(name)) where.fail(fmt::format("\"{}\" is a variable, not a mutex", name));
    auto [it, inserted] = lock_index_.emplace(name, static_cast<int>(p_.locks.size()));
    if (inserted) p_.locks.push_back({name, false});
    if (reader_writer) p_.locks[it->second].reader_writer = true;
    return it->second;
  }

  std::optional<int> find_var(const std::string& name) const {
    auto it = var_index_.find(name);
    if (it == var_index_.end()) return std::nullopt;
    return it->second;
  }

 private:
  Program& p_;
  std::map<std::string, int> var_index_;
  std::map<std::string, int> lock_index_;
};

int register_index(Actor& actor, const std::string& name) {
  for (std::size_t i = 0; i < actor.registers.size(); ++i) {
    if (actor.registers[i] == name) return static_cast<int>(i);
  }
  actor.registers.push_back(name);
  return static_cast<int>(actor.registers.size() - 1);
}

Operand parse_operand(const std::string& text, Actor& actor, const JsonCursor& where) {
  if (auto v = parse_int(text)) return Operand{false, -1, *v};
  std::size_t split = text.find_first_of("+-");
  const std::string reg = text.substr(0, split);
  if (!is_identifier(reg)) {
    where.fail(fmt::format("bad operand \"{}\": expected an integer, a register, or register+N / register-N", text));
  }
  Operand op{true, register_index(actor, reg), 0};
  if (split != std::string::npos) {
    const auto offset = parse_int(text.substr(split + 1));
    if (!offset) where.fail(fmt::format("bad operand \"{}\": expected an integer after '{}'", text, text[split]));
    op.value = text[split] == '-' ? -*offset : *offset;
  }
  return op;
}

std::int64_t parse_ms(const std::string& text, const JsonCursor& where) {
  auto v = parse_int(text);
  if (!v || *v < 0) where.fail(fmt::format("bad duration \"{}\": expected milliseconds, a non-negative integer", text));
  return *v;
}

// "*" (the global scope) or a non-negative integer.
std::int64_t parse_scope(const std::string& word, const std::string& text, const JsonCursor& where) {
  if (word == "*") return kGlobalScope;
  const auto v = parse_int(word);
  if (!v || *v < 0) where.fail(fmt::format("\"{}\": bad scope \"{}\": expected * or a non-negative integer", text, word));
  return *v;
}

bool is_jump(OpKind k) { return k == OpKind::goto_ || k == OpKind::jz || k == OpKind::jnz; }

// Every jump lands on an op of the actor, and a jump back passes at least one step on its
// way round: model code between two steps runs atomically, so a loop without one would spin
// inside a single step forever.
void check_jumps(const JsonCursor& ops, const Actor& actor) {
  const auto items = ops.items();
  for (std::size_t i = 0; i < actor.ops.size(); ++i) {
    const Op& op = actor.ops[i];
    if (!is_jump(op.kind)) continue;
    if (op.target >= actor.ops.size()) {
      items[i].fail(fmt::format("jumps to op {}, but the actor has {} ops (numbered from 0)", op.target, actor.ops.size()));
    }
    if (op.target > i) continue;
    bool step = false;
    for (std::size_t k = op.target; k < i && !step; ++k) step = !is_jump(actor.ops[k].kind);
    if (!step) items[i].fail(fmt::format("jumps back to op {} with no step on the way round (a loop must take one)", op.target));
  }
}

// One operation's text split into words, with the checks every verb makes of them.
struct OpWords {
  const JsonCursor& where;
  std::string text;
  std::vector<std::string> w;

  // Fails unless there are lo to hi words (the verb included), quoting the usage.
  void need(std::size_t lo, std::size_t hi, const char* usage) const {
    if (w.size() < lo || w.size() > hi) where.fail(fmt::format("\"{}\": expected \"{}\"", text, usage));
  }
  // Word i, failing unless it is a name.
  std::string ident(std::size_t i) const {
    if (!is_identifier(w[i])) where.fail(fmt::format("\"{}\": \"{}\" is not a name", text, w[i]));
    return w[i];
  }
};

// read, write and cas: the ops on a shared variable.
void parse_variable_op(const OpWords& o, Actor& actor, Names& names, Op& op) {
  const std::string& verb = o.w[0];
  if (verb == "read") {
    o.need(3, 3, "read VAR REG");
    op.kind = OpKind::read;
    op.object = names.var(o.ident(1), o.where);
    op.reg = register_index(actor, o.ident(2));
  } else if (verb == "write") {
    o.need(3, 3, "write VAR VALUE");
    op.kind = OpKind::write;
    op.object = names.var(o.ident(1), o.where);
    op.a = parse_operand(o.w[2], actor, o.where);
  } else {
    o.need(4, 5, "cas VAR EXPECTED DESIRED [REG]");
    op.kind = OpKind::cas;
    op.object = names.var(o.ident(1), o.where);
    op.a = parse_operand(o.w[2], actor, o.where);
    op.b = parse_operand(o.w[3], actor, o.where);
    if (o.w.size() == 5) op.reg = register_index(actor, o.ident(4));
  }
}

// lock, unlock, rlock, runlock, lockfor, trylock and unlockif: the ops on a mutex.
void parse_lock_op(const OpWords& o, Actor& actor, Names& names, Op& op) {
  const std::string& verb = o.w[0];
  if (verb == "lock" || verb == "unlock" || verb == "rlock" || verb == "runlock") {
    o.need(2, 2, fmt::format("{} MUTEX", verb).c_str());
    const bool rw = verb == "rlock" || verb == "runlock";
    op.kind = verb == "lock"     ? OpKind::lock
              : verb == "unlock" ? OpKind::unlock
              : verb == "rlock"  ? OpKind::rlock
                                 : OpKind::runlock;
    op.object = names.lock(o.ident(1), rw, o.where);
    return;
  }
  if (verb == "lockfor") {
    o.need(4, 4, "lockfor MUTEX MS REG");
    op.kind = OpKind::lockfor;
    op.object = names.lock(o.ident(1), false, o.where);
    op.ms = parse_ms(o.w[2], o.where);
    op.reg = register_index(actor, o.ident(3));
    return;
  }
  o.need(3, 3, verb == "trylock" ? "trylock MUTEX REG" : "unlockif MUTEX REG");
  op.kind = verb == "trylock" ? OpKind::trylock : OpKind::unlockif;
  op.object = names.lock(o.ident(1), false, o.where);
  op.reg = register_index(actor, o.ident(2));
}

// fwrite, fread, fsync and frename: the ops on the simulated filesystem.
void parse_file_op(const OpWords& o, Actor& actor, Op& op) {
  const std::string& verb = o.w[0];
  if (verb == "fwrite") {
    o.need(3, 3, "fwrite FILE VALUE");
    op.kind = OpKind::fwrite;
    op.path = "/" + o.ident(1);
    op.a = parse_operand(o.w[2], actor, o.where);
  } else if (verb == "fread") {
    o.need(3, 3, "fread FILE REG");
    op.kind = OpKind::fread;
    op.path = "/" + o.ident(1);
    op.reg = register_index(actor, o.ident(2));
  } else if (verb == "fsync") {
    o.need(2, 2, "fsync FILE (or /)");
    op.kind = OpKind::fsync;
    op.path = o.w[1] == "/" ? "/" : "/" + o.ident(1);
  } else {
    o.need(3, 3, "frename FILE FILE");
    op.kind = OpKind::frename;
    op.path = "/" + o.ident(1);
    op.path2 = "/" + o.ident(2);
  }
}

// goto, jz and jnz: the jumps to an op number.
void parse_jump_op(const OpWords& o, Actor& actor, Op& op) {
  const std::string& verb = o.w[0];
  const bool conditional = verb != "goto";
  o.need(conditional ? 3 : 2, conditional ? 3 : 2, conditional ? "jz|jnz REG OP" : "goto OP");
  op.kind = verb == "goto" ? OpKind::goto_ : verb == "jz" ? OpKind::jz : OpKind::jnz;
  if (conditional) op.reg = register_index(actor, o.ident(1));
  const auto target = parse_int(o.w.back());
  if (!target || *target < 0) o.where.fail(fmt::format("\"{}\": bad op number \"{}\"", o.text, o.w.back()));
  op.target = static_cast<std::size_t>(*target);
}

// sleep, clock, choose, observe, crash, hot and cold: time, an explored choice, observations,
// crashes and liveness obligations.
void parse_other_op(const OpWords& o, Actor& actor, Op& op) {
  const std::string& verb = o.w[0];
  if (verb == "sleep") {
    o.need(2, 2, "sleep MS");
    op.kind = OpKind::sleep;
    op.ms = parse_ms(o.w[1], o.where);
  } else if (verb == "clock") {
    o.need(2, 2, "clock R");
    op.kind = OpKind::clock;
    op.reg = register_index(actor, o.ident(1));
  } else if (verb == "choose") {
    o.need(3, 3, "choose R N");
    op.kind = OpKind::choose;
    op.reg = register_index(actor, o.ident(1));
    const auto n = parse_int(o.w[2]);
    if (!n || *n < 1 || *n > 16) o.where.fail(fmt::format("\"{}\": expected a number of values from 1 to 16", o.text));
    op.ms = *n;
  } else if (verb == "observe") {
    o.need(3, 3, "observe SCOPE VALUE");
    op.kind = OpKind::observe;
    op.scope = parse_scope(o.w[1], o.text, o.where);
    op.a = parse_operand(o.w[2], actor, o.where);
  } else if (verb == "crash") {
    o.need(2, 2, "crash machine|process");
    if (o.w[1] != "machine" && o.w[1] != "process") {
      o.where.fail(fmt::format("\"{}\": expected \"crash machine\" or \"crash process\"", o.text));
    }
    op.kind = OpKind::crash;
    op.crash = o.w[1] == "machine" ? CrashKind::machine : CrashKind::process;
  } else {
    o.need(2, verb == "hot" ? 3 : 2, verb == "hot" ? "hot NAME [MS]" : "cold NAME");
    op.kind = verb == "hot" ? OpKind::hot : OpKind::cold;
    op.obligation = o.ident(1);
    op.ms = o.w.size() == 3 ? parse_ms(o.w[2], o.where) : -1;
  }
}

// The text's statements, refused here (bad input) when outside lockstep's SQL subset.
void check_sql(const std::string& sql, const std::string& text, const JsonCursor& where) {
  try {
    const auto statements = sql::parse_sql(sql);
    if (statements.size() != 1) where.fail(fmt::format("\"{}\": expected one SQL statement", text));
  } catch (const sql::SqlError& e) {
    where.fail(fmt::format("\"{}\": {} (SQLSTATE {})", text, e.what(), e.sqlstate()));
  }
}

// sql REG|- TEXT: the text after the register, its `$x` registers made $1, $2, ...
void parse_sql_op(const OpWords& o, Actor& actor, Op& op) {
  o.need(3, std::numeric_limits<std::size_t>::max(), "sql REG|- STATEMENT");
  op.kind = OpKind::sql;
  if (o.w[1] != "-") op.reg = register_index(actor, o.ident(1));
  const std::size_t verb_end = o.text.find(o.w[0]) + o.w[0].size();
  const std::string rest = o.text.substr(o.text.find(o.w[1], verb_end) + o.w[1].size());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    std::size_t end = i + 1;
    while (rest[i] == '$' && end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[end])) || rest[end] == '_')) ++end;
    if (rest[i] != '$' || end == i + 1 || std::isdigit(static_cast<unsigned char>(rest[i + 1]))) {
      op.sql += rest[i];
      continue;
    }
    const std::string name = rest.substr(i + 1, end - i - 1);
    auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) {
      names.push_back(name);
      op.sql_registers.push_back(register_index(actor, name));
      at = names.end() - 1;
    }
    op.sql += fmt::format("${}", at - names.begin() + 1);
    i = end - 1;
  }
  const std::size_t first = op.sql.find_first_not_of(" \t");
  op.sql = first == std::string::npos ? std::string() : op.sql.substr(first);
  check_sql(op.sql, o.text, o.where);
}

Op parse_op(const JsonCursor& where, Actor& actor, Names& names) {
  const std::string text = where.as_string();
  const OpWords o{where, text, split_words(text)};
  if (o.w.empty()) where.fail("empty operation");
  Op op;
  const auto is = [&](std::initializer_list<std::string_view> verbs) {
    return std::find(verbs.begin(), verbs.end(), o.w[0]) != verbs.end();
  };
  if (is({"read", "write", "cas"})) {
    parse_variable_op(o, actor, names, op);
  } else if (is({"lock", "unlock", "rlock", "runlock", "lockfor", "trylock", "unlockif"})) {
    parse_lock_op(o, actor, names, op);
  } else if (is({"fwrite", "fread", "fsync", "frename"})) {
    parse_file_op(o, actor, op);
  } else if (is({"goto", "jz", "jnz"})) {
    parse_jump_op(o, actor, op);
  } else if (is({"sleep", "clock", "choose", "observe", "crash", "hot", "cold"})) {
    parse_other_op(o, actor, op);
  } else if (is({"sql"})) {
    parse_sql_op(o, actor, op);
  } else {
    where.fail(fmt::format(
        "unknown operation \"{}\" (expected read, write, cas, lock, unlock, rlock, runlock, "
        "lockfor, trylock, unlockif, sleep, clock, choose, observe, fwrite, fread, fsync, frename, crash, goto, jz, jnz, hot, "
        "cold or sql)",
        o.w[0]));
  }
  return op;
}

Check parse_check(const JsonCursor& where, const Program& p, const Names& names) {
  const std::string text = where.as_string();
  const auto w = split_words(text);
  if (w.size() != 3) where.fail(fmt::format("\"{}\": expected \"NAME OP INTEGER\" such as \"x == 2\" or \"a.r != 0\"", text));
  Check c;
  c.text = text;
  static const std::pair<const char*, Compare> kOps[] = {{"==", Compare::eq}, {"!=", Compare::ne},
                                                         {"<", Compare::lt},  {"<=", Compare::le},
                                                         {">", Compare::gt},  {">=", Compare::ge}};
  bool found = false;
  for (const auto& [sym, cmp] : kOps) {
    if (w[1] == sym) {
      c.compare = cmp;
      found = true;
    }
  }
  if (!found) where.fail(fmt::format("\"{}\": unknown comparison \"{}\"", text, w[1]));
  const auto rhs = parse_int(w[2]);
  if (!rhs) where.fail(fmt::format("\"{}\": expected an integer after \"{}\"", text, w[1]));
  c.expected = *rhs;
  const auto dot = w[0].find('.');
  if (w[0].starts_with("@")) {
    const std::int64_t scope = parse_scope(w[0].substr(1), text, where);
    const auto it = std::find(p.scopes.begin(), p.scopes.end(), scope);
    if (it == p.scopes.end()) where.fail(fmt::format("\"{}\": no actor observes in scope {}", text, w[0].substr(1)));
    c.scope = static_cast<int>(it - p.scopes.begin());
  } else if (dot == std::string::npos) {
    const auto var = names.find_var(w[0]);
    if (!var) where.fail(fmt::format("\"{}\": unknown variable \"{}\"", text, w[0]));
    c.var = *var;
  } else {
    const std::string actor = w[0].substr(0, dot), reg = w[0].substr(dot + 1);
    for (std::size_t a = 0; a < p.actors.size(); ++a) {
      if (p.actors[a].name != actor) continue;
      c.actor = static_cast<int>(a);
      for (std::size_t r = 0; r < p.actors[a].registers.size(); ++r) {
        if (p.actors[a].registers[r] == reg) c.reg = static_cast<int>(r);
      }
    }
    if (c.actor < 0) where.fail(fmt::format("\"{}\": unknown actor \"{}\"", text, actor));
    if (c.reg < 0) where.fail(fmt::format("\"{}\": actor \"{}\" has no register \"{}\"", text, actor, reg));
  }
  return c;
}

// config.symmetric: [["a", "b", ...], ...], classes of actors with the same ops (as written)
// whose registers no check compares: then nothing tells them apart.
void parse_symmetric(const JsonCursor& c, const JsonCursor& actors, Program& p) {
  std::vector<bool> taken(p.actors.size(), false);
  for (const auto& group : c.items()) {
    std::vector<ActorId> members;
    for (const auto& item : group.items()) {
      const std::string name = item.as_string();
      ActorId id = -1;
      for (std::size_t a = 0; a < p.actors.size(); ++a) {
        if (p.actors[a].name == name) id = static_cast<ActorId>(a);
      }
      if (id < 0) item.fail(fmt::format("no actor \"{}\"", name));
      if (taken[id]) item.fail(fmt::format("actor \"{}\" is in a symmetric class already", name));
      if (!members.empty() && actors.items()[id].at("ops").value() != actors.items()[members.front()].at("ops").value()) {
        item.fail(fmt::format("actor \"{}\" has other ops than \"{}\": only identical actors are interchangeable", name,
                              p.actors[members.front()].name));
      }
      for (const Check& check : p.checks) {
        if (check.actor == id) item.fail(fmt::format("check \"{}\" compares a register of \"{}\": it tells the actors apart", check.text, name));
      }
      taken[id] = true;
      members.push_back(id);
    }
    if (members.size() < 2) group.fail("a symmetric class needs two or more actors");
    p.symmetric.push_back(std::move(members));
  }
}

}  // namespace

Program parse_program(const SystemInput& input) {
  Program p;
  Names names(p);
  if (!input.actors) {
    input.fail("", "missing \"actors\": an array of {\"name\", \"ops\"}");
  }
  const auto actors = input.actors->items();
  if (actors.empty()) input.actors->fail("expected at least one actor");
  if (actors.size() > static_cast<std::size_t>(kMaxActors)) input.actors->fail(fmt::format("at most {} actors", kMaxActors));
  for (const auto& a : actors) {
    a.expect_keys({"name", "ops"});
    Actor actor;
    actor.name = a.at("name").as_string();
    if (!is_identifier(actor.name)) a.at("name").fail(fmt::format("\"{}\" is not a name", actor.name));
    for (const auto& other : p.actors) {
      if (other.name == actor.name) a.at("name").fail(fmt::format("duplicate actor name \"{}\"", actor.name));
    }
    for (const auto& op : a.at("ops").items()) {
      actor.ops.push_back(parse_op(op, actor, names));
      const Op& added = actor.ops.back();
      if (added.kind == OpKind::fwrite || added.kind == OpKind::fread || added.kind == OpKind::fsync ||
          added.kind == OpKind::frename) {
        p.uses_files = true;
      }
      if (added.kind == OpKind::sql) p.uses_sql = true;
      if (added.kind == OpKind::observe && std::find(p.scopes.begin(), p.scopes.end(), added.scope) == p.scopes.end()) {
        p.scopes.push_back(added.scope);
      }
    }
    check_jumps(a.at("ops"), actor);
    p.actors.push_back(std::move(actor));
  }
  if (input.config) {
    input.config->expect_keys({"vars", "check", "symmetric", "sql_setup", "sql_check", "own_pools"});
    if (auto own = input.config->find("own_pools")) p.own_pools = own->as_bool();
    for (auto [key, list] : {std::pair{"sql_setup", &p.sql_setup}, std::pair{"sql_check", &p.sql_checks}}) {
      if (auto statements = input.config->find(key)) {
        for (const auto& st : statements->items()) {
          list->push_back(st.as_string());
          check_sql(list->back(), list->back(), st);
        }
      }
    }
    if (!p.sql_checks.empty() || !p.sql_setup.empty()) p.uses_sql = true;
    if (auto vars = input.config->find("vars")) {
      for (const auto& name : vars->keys()) {
        const JsonCursor value = vars->at(name);
        if (!is_identifier(name)) value.fail(fmt::format("\"{}\" is not a name", name));
        p.initial[names.var(name, value)] = value.as_int();
      }
    }
    if (auto checks = input.config->find("check")) {
      for (const auto& c : checks->items()) p.checks.push_back(parse_check(c, p, names));
    }
    if (auto symmetric = input.config->find("symmetric")) parse_symmetric(*symmetric, *input.actors, p);
  }
  return p;
}

bool compare(Compare c, std::int64_t lhs, std::int64_t rhs) {
  switch (c) {
    case Compare::eq: return lhs == rhs;
    case Compare::ne: return lhs != rhs;
    case Compare::lt: return lhs < rhs;
    case Compare::le: return lhs <= rhs;
    case Compare::gt: return lhs > rhs;
    case Compare::ge: return lhs >= rhs;
  }
  return false;
}

std::string_view compare_text(Compare c) {
  switch (c) {
    case Compare::eq: return "==";
    case Compare::ne: return "!=";
    case Compare::lt: return "<";
    case Compare::le: return "<=";
    case Compare::gt: return ">";
    case Compare::ge: return ">=";
  }
  return "?";
}

}  // namespace lockstep::script

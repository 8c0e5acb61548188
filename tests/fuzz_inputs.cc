// tests/fuzz_inputs.cc: a bounded mutation fuzzer for what lockstep reads, through the
// command line itself, in process: scenario and trace files (check, replay, shrink, report)
// and, with --spec, PostgreSQL isolation specs (check and isolation on the simulated server).
//
// Seeds are the *.json files (with --spec, the *.spec files) under the given directories
// (scenarios/, traces/; tests/pg-isolation, tests/sql-specs). Each run takes one seed,
// applies one to four mutations and runs one command on the result with tight bounds. JSON:
// bytes flipped, inserted, deleted or repeated; a value replaced by another type, a huge or
// out-of-range number, a deep nest, or a value from another seed. Specs: the mutations of
// tests/fuzz_spec_mutations.h (structure, SQL tokens, nesting, odd values, constructs
// outside the subset, bytes). A run that ends with exit code 3 (internal error), takes
// longer than --hang-seconds, or crashes (ASan, UBSan, a signal) is a finding: its input is
// kept in --findings (a crash leaves it as the file current.*) and the driver exits 1. Exit
// codes 0, 1 and 2 are all fine: bad input must give 2 with a message, a valid input any
// verdict; with --spec, an exit 2 whose message names no place in the file is a finding too.
//
//   fuzz_inputs [--spec] [--seconds S | --runs N] [--seed N] [--hang-seconds S]
//               [--findings DIR] [--log FILE] DIR...
//
// Deterministic for a given seed and --runs (the inputs, not the timings).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/commands.h"
#include "fuzz_spec_mutations.h"

namespace {

namespace fs = std::filesystem;
using lockstep::fuzz::below;
using lockstep::fuzz::Rng;

char g_alarm_message[512];  // what the alarm handler prints: the run and its input

char g_crash_message[512];  // what the crash handler prints: the run and where its input is

extern "C" void on_alarm(int) {
  (void)!write(STDERR_FILENO, g_alarm_message, strlen(g_alarm_message));
  _exit(1);
}

// A crash in the command under test ends the driver: say which run, and leave its input.
extern "C" void on_crash(int sig) {
  (void)!write(STDERR_FILENO, g_crash_message, strlen(g_crash_message));
  signal(sig, SIG_DFL);
  raise(sig);
}

void catch_crashes() {
  static char alternate_stack[1 << 16];  // a stack overflow needs a stack to report on
  stack_t ss{};
  ss.ss_sp = alternate_stack;
  ss.ss_size = sizeof alternate_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction action{};
  action.sa_handler = on_crash;
  action.sa_flags = SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) sigaction(sig, &action, nullptr);
}

// An exit-2 message that names no place: neither "FILE:LINE" nor a line or column word.
bool names_a_place(const std::string& message, const std::string& input) {
  const std::string name = std::filesystem::path(input).filename().string();
  return message.find(name + ":") != std::string::npos || message.find("line ") != std::string::npos;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Values that have broken JSON readers before: types where another is expected, numbers
// out of every range, deep nests, odd strings.
nlohmann::json odd_value(Rng& rng) {
  switch (below(rng, 12)) {
    case 0: return nullptr;
    case 1: return true;
    case 2: return -1;
    case 3: return std::numeric_limits<std::int64_t>::min();
    case 4: return std::numeric_limits<std::uint64_t>::max();
    case 5: return 1e300;
    case 6: return 0.5;
    case 7: return "";
    case 8: return std::string(1000, 'x');
    case 9: return nlohmann::json::array();
    case 10: return nlohmann::json::object();
    default: {
      nlohmann::json nest = 1;
      for (int i = 0; i < 150; ++i) nest = nlohmann::json::array({nest});
      return nest;
    }
  }
}

// Points at a random value inside `j` (the root included).
nlohmann::json* random_node(nlohmann::json& j, Rng& rng) {
  nlohmann::json* at = &j;
  while ((at->is_array() || at->is_object()) && !at->empty() && below(rng, 4) != 0) {
    auto it = at->begin();
    std::advance(it, static_cast<std::ptrdiff_t>(below(rng, at->size())));
    at = &*it;
  }
  return at;
}

std::string mutate_json(const std::string& text, const std::vector<std::string>& seeds, Rng& rng) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return text;
  nlohmann::json* node = random_node(j, rng);
  if (node->is_number() && below(rng, 2) == 0) {  // a nearby value keeps most inputs valid
    *node = static_cast<std::int64_t>(below(rng, 12)) - 1;
    return j.dump();
  }
  if (node->is_boolean()) {
    *node = !node->get<bool>();
    return j.dump();
  }
  switch (below(rng, 4)) {
    case 0: *node = odd_value(rng); break;
    case 1: {  // a value from another seed
      nlohmann::json other = nlohmann::json::parse(seeds[below(rng, seeds.size())], nullptr, false);
      if (!other.is_discarded()) *node = *random_node(other, rng);
      break;
    }
    case 2:
      if (node->is_object() && !node->empty()) {
        auto it = node->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(below(rng, node->size())));
        node->erase(it.key());
      } else if (node->is_array() && !node->empty()) {
        node->erase(below(rng, node->size()));
      }
      break;
    default:
      if (node->is_array() && !node->empty()) {
        nlohmann::json copy = (*node)[below(rng, node->size())];
        for (int i = 0; i < 1 + static_cast<int>(below(rng, 40)); ++i) node->push_back(copy);
      } else if (node->is_object()) {
        (*node)["unexpected"] = odd_value(rng);
      }
      break;
  }
  return j.dump(below(rng, 2) == 0 ? -1 : 2);
}

std::string json_bytes(const std::string& s, Rng& rng) {
  static const char* const kTokens[] = {"1e309", "-1e309", "[[[[[[[[", "]]]]", "{\"\":", "\"\\u0000\"", "\"\\ud800\"",
                                        "18446744073709551616", "-9223372036854775809", "null", ",", "\"", "0.0e-99999"};
  return lockstep::fuzz::mutate_bytes(s, kTokens, rng);
}

struct Command {
  std::vector<std::string> args;  // with INPUT and OUT placeholders
};

}  // namespace

int main(int argc, char** argv) {
  bool spec_mode = false;
  double seconds = 0;
  std::uint64_t runs = 0, seed = 1, hang_seconds = 30;
  fs::path findings = "fuzz-findings";
  std::optional<fs::path> log_path;  // a line per run: its command, exit code and first message line
  std::optional<std::uint64_t> only_run;  // reproduce one run of a reported finding: draw, run only it, keep it
  std::vector<fs::path> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) {
        std::cerr << "fuzz_inputs: " << a << " needs a value\n";
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--spec") {
      spec_mode = true;
    } else if (a == "--seconds") {
      seconds = std::stod(value());
    } else if (a == "--runs") {
      runs = std::stoull(value());
    } else if (a == "--seed") {
      seed = std::stoull(value());
    } else if (a == "--hang-seconds") {
      hang_seconds = std::stoull(value());
    } else if (a == "--log") {
      log_path = value();
    } else if (a == "--only-run") {
      only_run = std::stoull(value());
    } else if (a == "--findings") {
      findings = value();
    } else {
      dirs.emplace_back(a);
    }
  }
  if (only_run) runs = *only_run + 1;
  if (dirs.empty() || (seconds <= 0 && runs == 0)) {
    std::cerr << "usage: fuzz_inputs [--spec] [--seconds S | --runs N] [--seed N] [--hang-seconds S] [--findings DIR] [--log FILE] [--only-run N] DIR...\n"
                 "  --only-run N: draw runs 0..N as the same seed does, run only N and keep its input as DIR/run-N\n";
    return 2;
  }
  const std::string extension = spec_mode ? ".spec" : ".json";
  std::vector<std::string> seeds;
  for (const auto& d : dirs) {
    for (const auto& e : fs::recursive_directory_iterator(d)) {
      if (e.is_regular_file() && e.path().extension() == extension) seeds.push_back(read_file(e.path()));
    }
  }
  if (seeds.empty()) {
    std::cerr << "fuzz_inputs: no *" << extension << " seeds under the given directories\n";
    return 2;
  }
  // The input lives in --findings while it runs, so that a crash leaves it there.
  fs::create_directories(findings);
  const fs::path work = fs::temp_directory_path() / fmt::format("lockstep-fuzz-{}", getpid());
  fs::create_directories(work);
  const std::string input = (findings / ("current" + extension)).string();
  const std::string out = (work / "out").string();
  const std::vector<Command> json_commands = {
      {{"check", "INPUT", "--max-executions", "200", "--max-seconds", "2", "--trace-out", "OUT.json", "--json"}},
      {{"check", "INPUT", "--strategy", "random", "--max-executions", "50", "--trace-out", "OUT.json"}},
      {{"replay", "INPUT", "--json"}},
      {{"shrink", "INPUT", "--out", "OUT.json", "--max-seconds", "2"}},
      {{"report", "INPUT", "-o", "OUT.html"}},
  };
  const std::vector<Command> spec_commands = {
      {{"check", "INPUT", "--max-executions", "200", "--max-seconds", "2", "--trace-out", "OUT.json", "--json"}},
      // (Bounded in time too: 30 random runs of a mutant that repeats pst8pdt-history.spec's
      // heavy steps 75 times take over 30 s, work rather than a hang.)
      {{"check", "INPUT", "--strategy", "random", "--max-executions", "30", "--max-seconds", "10", "--trace-out", "OUT.json"}},
      // A canceled step costs its permutation about 20 ms per 300 virtual seconds waited (the
      // driver polls every 11 virtual ms, as isolationtester every 10 real ms): a spec of
      // 3,003 interleavings whose permutations cancel up to 70 steps each takes 4 s at 1 s,
      // two minutes at 30 s and some 15 minutes at the default 300 s: a long run (each
      // permutation printed as it ends, SIGTERM honoured) rather than a hang. Short waits keep
      // such runs within --hang-seconds; docs/notes.md has the event-driven wait that would
      // make a wait's cost independent of its length.
      {{"isolation", "INPUT", "--max-step-wait", "3"}},
      {{"isolation", "INPUT", "--max-step-wait", "1"}},
  };
  const std::vector<Command>& commands = spec_mode ? spec_commands : json_commands;
  catch_crashes();
  std::ofstream log;
  if (log_path) log.open(*log_path);
  signal(SIGALRM, on_alarm);
  Rng rng(seed);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t done = 0, found = 0;
  std::uint64_t by_code[4] = {0, 0, 0, 0};
  while (runs != 0 ? done < runs
                   : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    std::string text = seeds[below(rng, seeds.size())];
    const int mutations = 1 + static_cast<int>(below(rng, 3));
    for (int m = 0; m < mutations; ++m) {
      if (spec_mode) {
        text = lockstep::fuzz::mutate_spec(text, seeds, rng);
      } else {
        text = below(rng, 4) != 0 ? mutate_json(text, seeds, rng) : json_bytes(text, rng);
      }
    }
    const Command& c = commands[below(rng, commands.size())];
    if (only_run && done != *only_run) {  // drawn as the full run draws it, not run
      ++done;
      continue;
    }
    if (only_run) std::ofstream(findings / fmt::format("run-{}{}", done, extension), std::ios::binary) << text;
    std::ofstream(input, std::ios::binary | std::ios::trunc) << text;
    std::vector<std::string> args = {"lockstep"};
    for (const auto& a : c.args) {
      std::string s = a;
      if (s == "INPUT") s = input;
      if (s.starts_with("OUT")) s = out + s.substr(3);
      args.push_back(s);
    }
    std::vector<const char*> cargs;
    for (const auto& a : args) cargs.push_back(a.c_str());
    // A finding's input is kept before it can crash the driver.
    const fs::path kept = findings / fmt::format("run-{}{}", done, extension);
    snprintf(g_alarm_message, sizeof g_alarm_message, "fuzz_inputs: HANG (over %llu s) in run %llu: %s %s\n",
             static_cast<unsigned long long>(hang_seconds), static_cast<unsigned long long>(done), c.args[0].c_str(),
             input.c_str());
    snprintf(g_crash_message, sizeof g_crash_message,
             "fuzz_inputs: CRASH in run %llu: %s %s (the input is kept there; --seed %llu --only-run %llu runs it again)\n",
             static_cast<unsigned long long>(done), c.args[0].c_str(), input.c_str(),
             static_cast<unsigned long long>(seed), static_cast<unsigned long long>(done));
    alarm(static_cast<unsigned>(hang_seconds));
    const auto run_start = std::chrono::steady_clock::now();
    std::ostringstream sink_out, sink_err;
    const int code = lockstep::cli::run_cli(static_cast<int>(cargs.size()), cargs.data(), sink_out, sink_err);
    alarm(0);
    ++by_code[code >= 0 && code <= 3 ? code : 3];
    if (log.is_open()) {
      const std::string message = sink_err.str();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - run_start).count();
      log << fmt::format("run {} {} exit {} ({:.0f} ms): {}\n", done, c.args[0], code, ms, message.substr(0, message.find('\n')));
    }
    const bool unplaced = spec_mode && code == lockstep::cli::kExitBadInput && !names_a_place(sink_err.str(), input);
    if (code == lockstep::cli::kExitInternal || code < 0 || code > 3 || unplaced) {
      ++found;
      std::ofstream(kept, std::ios::binary) << text;
      std::cerr << fmt::format("fuzz_inputs: {} in run {} ({}): {}  input kept in {}\n",
                               unplaced ? "a rejection that names no place" : fmt::format("exit {}", code), done,
                               c.args[0], sink_err.str(), kept.string());
    }
    ++done;
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::remove(input, ec);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("fuzz_inputs: {} runs in {:.1f} s from {} seeds (seed {}): exit 0: {}, 1: {}, 2: {}; "
                           "findings (exit 3, crash, hang): {}\n",
                           done, took, seeds.size(), seed, by_code[0], by_code[1], by_code[2], found);
  return found == 0 ? 0 : 1;
}

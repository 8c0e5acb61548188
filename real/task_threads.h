// real/task_threads.h: a fixed set of OS threads that run the tasks handed to them: how one
// search runs on several threads (sim's ExploreOptions::spawn, check --jobs). Lives in real/
// because sim/ and model/ never start a thread. Tasks start in the order given, each on the
// first free thread; the destructor waits for every task given, then joins the threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lockstep::real {

class TaskThreads {
 public:
  explicit TaskThreads(int threads);
  ~TaskThreads();
  TaskThreads(const TaskThreads&) = delete;
  TaskThreads& operator=(const TaskThreads&) = delete;

  void run(std::function<void()> task);
  // run() as a function, for sim::ExploreOptions::spawn. Valid while this object lives.
  std::function<void(std::function<void()>)> spawner() {
    return [this](std::function<void()> task) { run(std::move(task)); };
  }

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace lockstep::real

#include "interrupt.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace labrun {

namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_count = 0;

extern "C" void on_signal(int signal) {
  if (g_signal == 0) g_signal = signal;
  g_count = g_count + 1;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int interrupt_signal() { return g_signal; }

int interrupt_count() { return g_count; }

void throw_if_interrupted() {
  if (const int s = g_signal) throw Interrupted(s);
}

int run_interruptible(const char* command, const std::function<int()>& body) {
  install_interrupt_handlers();
  try {
    return body();
  } catch (const Interrupted& e) {
    const char* name = sigabbrev_np(e.signal());
    std::cerr << "labrun " << command << ": interrupted by SIG" << (name ? name : "?") << "; nothing written\n";
    return 128 + e.signal();
  }
}

}  // namespace labrun

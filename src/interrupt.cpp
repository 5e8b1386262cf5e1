#include "interrupt.hpp"

#include <csignal>

namespace labrun {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int signal) {
  if (g_signal == 0) g_signal = signal;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return g_signal; }

void throw_if_interrupted() {
  if (const int s = g_signal) throw Interrupted(s);
}

}  // namespace labrun

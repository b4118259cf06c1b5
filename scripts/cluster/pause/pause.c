/*
 * The pod sandbox's process for the test cluster's containerd: holds the pod's namespaces until
 * the runtime stops it. Exits at once on SIGTERM or SIGINT; reaps children, as PID 1 of a pod
 * that shares its process namespace must.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void leave(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction quit = {.sa_handler = leave};
  struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
  sigaction(SIGTERM, &quit, NULL);
  sigaction(SIGINT, &quit, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
}

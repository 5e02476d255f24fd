"""The inspector's terminal driver: Textual's Linux driver, without the pause on quitting.

Textual's driver stops its input thread on quitting and waits for it, and the
thread looks at its stop flag only between waits of 0.1 s on the terminal,
then waits 0.1 s more: every quit paused 0.1-0.2 s with nothing left to do
(docs/cli.md, "inspect"). This driver raises the flag and lets the thread end
by itself. The thread reads no more than Textual's own did while it waited: a
key pressed within that 0.1 s, and nothing once the terminal is back in line
mode. Everything else (mouse reporting off, the pending input dropped, the
terminal restored) is done as Textual does it, and the process still ends
only once the thread has (the inspector's command skips that wait too, since
its screen has closed).
"""

from __future__ import annotations

import signal
import termios

from textual.drivers.linux_driver import LinuxDriver


class InspectorDriver(LinuxDriver):
    """Textual's Linux driver whose ``disable_input`` does not wait for the input thread to end."""

    def disable_input(self) -> None:
        if self.exit_event.is_set():
            return  # already stopped: Textual stops input twice on its way out
        self.exit_event.set()  # the input thread sees it within 0.1 s, and ends
        try:
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
            self._disable_mouse_support()
            termios.tcflush(self.fileno, termios.TCIFLUSH)
        except (OSError, termios.error):
            pass  # the terminal is gone: nothing left to restore

    def start_application_mode(self) -> None:
        # Back from a suspension (Ctrl+Z): the old input thread ends before a new one starts.
        if self._key_thread is not None:
            self._key_thread.join()
        self.exit_event.clear()
        super().start_application_mode()

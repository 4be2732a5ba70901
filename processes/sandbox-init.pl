#!/usr/bin/perl
# PID 1 of a run's sandbox (processes/sandbox.ts), with no capability left. It serves, on the sandbox's own loopback,
# the treewarden API (at the port the agent's TREEWARDEN_API_URL names) and an HTTP proxy to the outside network, each
# connection relayed to a worker's gate (processes/sandbox-gate.ts) through the Unix sockets of the gate folder; it
# starts the agent once both listen, reaps whatever is orphaned in the sandbox, and ends with the agent's status.
# Perl (perl-base is part of every Debian and Ubuntu system) with core modules only: it starts in a few milliseconds
# and holds a few MB, where a Node process took 110 ms and 40 MB per run (BENCHMARKS.md, "Agent sandbox").
#
# Signals: a stop reaches the agent itself (its process group, its owner token, its cgroup), so this process only
# waits them out (a handler, not SIG_IGN, which the agent would inherit). When it ends, the kernel ends whatever the
# agent left in the sandbox.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;
use IO::Socket::UNIX;
use POSIX qw(WNOHANG _exit);

my ($gate_dir, $api_port, $proxy_port, @agent) = @ARGV;
$SIG{$_} = sub { } for qw(TERM INT HUP);
# a child's end wakes the loop at once (the self-pipe: a signal between the reap and the wait is not lost)
pipe(my $wake_read, my $wake_write) or fail(125, "cannot make a pipe: $!");
$wake_write->blocking(0);
$SIG{CHLD} = sub { syswrite($wake_write, 'x') };

my %kind_of;
my $listening = IO::Select->new;
for ([$api_port, 'api'], [$proxy_port, 'proxy']) {
    my ($port, $kind) = @$_;
    my $server = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 128, ReuseAddr => 1)
      or fail(125, "cannot serve the $kind on 127.0.0.1:$port inside: $!");
    $kind_of{fileno $server} = $kind;
    $listening->add($server);
}

my $agent = fork // fail(125, "cannot fork: $!");
if ($agent == 0) {
    $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP CHLD);
    $_->close for $listening->handles, $wake_read, $wake_write;
    exec { $agent[0] } @agent or fail(127, "cannot start $agent[0]: $!");
}

while (1) {
    while ((my $pid = waitpid(-1, WNOHANG)) > 0) {
        next unless $pid == $agent;
        exit(($? & 127) ? 128 + ($? & 127) : $? >> 8);
    }
    for my $server (IO::Select->new($listening->handles, $wake_read)->can_read) {
        if ($server == $wake_read) {
            sysread($wake_read, my $drained, 4096);
            next;
        }
        my $client = $server->accept or next;
        my $kind = $kind_of{fileno $server};
        my $relay = fork;
        if (defined $relay && $relay == 0) {
            $SIG{CHLD} = 'DEFAULT';
            $_->close for $listening->handles, $wake_read, $wake_write;
            relay($client, $kind);
            _exit(0);
        }
        $client->close;
    }
}

# A live gate socket of this kind (a worker that died left a stale one: the next is tried).
sub gate {
    my ($kind) = @_;
    opendir(my $dir, $gate_dir) or return;
    my @sockets = reverse sort grep { /^\Q$kind\E-.*\.sock$/ } readdir $dir;
    for my $name (@sockets) {
        my $socket = IO::Socket::UNIX->new(Peer => "$gate_dir/$name", Type => SOCK_STREAM);
        return $socket if $socket;
    }
    return;
}

sub relay {
    my ($client, $kind) = @_;
    my $upstream = gate($kind) or return;
    my $open = IO::Select->new($client, $upstream);
    while ($open->count) {
        for my $from ($open->can_read) {    # none when a signal interrupted the wait: wait again
            my $to = $from == $client ? $upstream : $client;
            my $read = sysread($from, my $buffer, 65536);
            if (!$read) {
                return if $from == $upstream;
                shutdown($upstream, 1);    # the client is done sending: the answer may still come
                $open->remove($client);
                next;
            }
            for (my $sent = 0; $sent < $read;) {
                my $wrote = syswrite($to, $buffer, $read - $sent, $sent) // return;
                $sent += $wrote;
            }
        }
    }
}

sub fail {
    my ($status, $message) = @_;
    print STDERR "treewarden sandbox: $message\n";
    _exit($status);
}

# run-sqliosim.sh RESULTS COMMAND...: shipped and started detached (setsid) by the sqliosim
# role, so that the run outlives the SSH session and the controller: records its own pid in
# run.pid beside it (a rerun of the play finds the run there and attaches to it), runs COMMAND
# (the time-limited `sqliosim run`) with its stdout and stderr in RESULTS/run.stdout and
# RESULTS/run.stderr, then writes its exit code to RESULTS/exit-code.
results=$1
shift
echo $$ > "$(dirname "$0")/run.pid"
"$@" > "$results/run.stdout" 2> "$results/run.stderr" < /dev/null
echo $? > "$results/exit-code"

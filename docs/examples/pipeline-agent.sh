#!/bin/sh
# A stand-in agent for trying `voyager-brain pipeline` without a model: it does each
# role's file work the simplest way and prints a result as `claude -p --output-format
# json` does. The reviewer asks for one revision, then approves.
#
#   voyager-brain pipeline run "Add a hello script" --runner "sh docs/examples/pipeline-agent.sh"
set -eu
cat > /dev/null   # the stage's task arrives on stdin; this agent knows its part already
case "$VOYAGER_PIPELINE_ROLE" in
  scout)
    printf '# Findings\n\nNo script exists yet; the README says nothing about one.\n' \
      > .brain/RESEARCH/hello.md ;;
  architect)
    printf '# Plan\n\n- [ ] Add hello.sh printing a greeting\n- [ ] Make it executable\n' \
      > .brain/PLAN.md ;;
  builder)
    printf '#!/bin/sh\necho "Hello from the pipeline"\n' > hello.sh
    chmod +x hello.sh ;;
  reviewer)
    # REVIEW.md is empty until the engine writes the first verdict into it.
    if [ -s .brain/REVIEW.md ]; then
      verdict=APPROVE; summary="Done as planned."
    else
      verdict=REVISE; summary="Works; say what it is for in a comment."
    fi
    printf '{"type":"result","subtype":"success","session_id":"demo-%s","result":"%s","structured_output":{"verdict":"%s","score":8,"summary":"%s","issues":[],"patternsCompliance":true}}\n' \
      "$VOYAGER_PIPELINE_STAGE" "$summary" "$verdict" "$summary"
    exit 0 ;;
esac
printf '{"type":"result","subtype":"success","session_id":"demo-%s","result":"done"}\n' "$VOYAGER_PIPELINE_STAGE"

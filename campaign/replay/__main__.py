"""``python -m campaign.replay``: the same command as ``campaign replay-server``."""

from campaign.cli.replay import replay_server

if __name__ == "__main__":
    replay_server(prog_name="python -m campaign.replay")

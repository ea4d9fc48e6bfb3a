from synth.cli import app

app(prog_name="mathstress")

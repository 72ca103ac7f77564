from mdad.cli import app

app()

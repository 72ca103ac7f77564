from mdad.cli import main

main()

from haiku.rag.cli import main

main()

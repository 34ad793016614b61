from pipelines.tools.bench import main

main()

"""A tiny inventory module: the demo's sample code."""


def total_value(items):
    # TODO: skip items with a negative quantity
    return sum(item["price"] * item["qty"] for item in items)


def low_stock(items, threshold=3):
    # TODO: make the threshold configurable per item
    return [item["name"] for item in items if item["qty"] < threshold]
